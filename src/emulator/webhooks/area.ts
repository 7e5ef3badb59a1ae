/**
 * The webhooks area: the webhook, delivery and outbox tables, and the delivery engine
 * that listens to the event bus. Webhook management itself is GraphQL (graphql area).
 */
import type { EmulatorArea } from "../context.ts"
import { startDelivery } from "./delivery.ts"
import { WEBHOOKS_DDL } from "./store.ts"

export const webhooksArea: EmulatorArea = {
  name: "webhooks",
  ddl: WEBHOOKS_DDL,
  start: (ctx) => startDelivery(ctx).stop
}
