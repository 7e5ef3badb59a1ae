/**
 * Webhooks on the receiving side: signature check and a small receiver.
 *
 * ```ts
 * const program = Effect.scoped(
 *   Effect.gen(function* () {
 *     const receiver = yield* webhookQueue({ secret: Redacted.make(secretFromCreateWebhook) })
 *     // register receiver.url as the webhook's url, then:
 *     const { delivery } = yield* Queue.take(receiver.deliveries)
 *   })
 * )
 * ```
 *
 * Or verify by hand: `verifySignature(rawBodyBytes, req.headers["x-signature"], secret)`,
 * always over the bytes as received, never a re-serialized body.
 */
export { SIGNATURE_HEADER, signBody, verifySignature } from "./signature.ts"
export {
  serveWebhookBatches,
  serveWebhooks,
  webhookQueue,
  WebhookDeliveries,
  WebhookDeliveriesLive,
  WebhookReceiverError,
  type ReceivedDelivery,
  type WebhookReceiver,
  type WebhookReceiverOptions,
  type WebhookSecrets
} from "./receiver.ts"
