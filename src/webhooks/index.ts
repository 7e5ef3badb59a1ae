/** Webhooks on the receiving side: signature check and a small receiver. */
export { SIGNATURE_HEADER, signBody, verifySignature } from "./signature.ts"
export {
  serveWebhooks,
  webhookQueue,
  WebhookDeliveries,
  WebhookDeliveriesLive,
  WebhookReceiverError,
  type ReceivedDelivery,
  type WebhookReceiver,
  type WebhookReceiverOptions
} from "./receiver.ts"
