/**
 * Webhooks: the subscribable event values, the Webhook object and the delivery body.
 */
import { Schema } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct, UnknownValue } from "./open.ts"

/** Record group (R-WEBHOOK-EVENT-01). */
export const RECORD_EVENTS = [
  "TODO_CREATED",
  "TODO_DELETED",
  "TODO_MOVED",
  "TODO_NAME_CHANGED",
  "TODO_DONE_STATUS_UPDATED",
  "TODO_DUE_DATE_ADDED",
  "TODO_DUE_DATE_UPDATED",
  "TODO_DUE_DATE_REMOVED",
  "TODO_ASSIGNEE_ADDED",
  "TODO_ASSIGNEE_REMOVED",
  "TODO_TAG_ADDED",
  "TODO_TAG_REMOVED",
  "TODO_CUSTOM_FIELD_UPDATED"
] as const

/** Checklist group (R-WEBHOOK-EVENT-02). */
export const CHECKLIST_EVENTS = [
  "TODO_CHECKLIST_CREATED",
  "TODO_CHECKLIST_NAME_CHANGED",
  "TODO_CHECKLIST_DELETED",
  "TODO_CHECKLIST_ITEM_CREATED",
  "TODO_CHECKLIST_ITEM_NAME_CHANGED",
  "TODO_CHECKLIST_ITEM_DELETED",
  "TODO_CHECKLIST_ITEM_DUE_DATE_ADDED",
  "TODO_CHECKLIST_ITEM_DUE_DATE_UPDATED",
  "TODO_CHECKLIST_ITEM_DUE_DATE_REMOVED",
  "TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED",
  "TODO_CHECKLIST_ITEM_ASSIGNEE_REMOVED",
  "TODO_CHECKLIST_ITEM_DONE_STATUS_UPDATED"
] as const

/** List group (R-WEBHOOK-EVENT-03). */
export const LIST_EVENTS = ["TODO_LIST_CREATED", "TODO_LIST_DELETED", "TODO_LIST_NAME_CHANGED"] as const
/** Custom field group (R-WEBHOOK-EVENT-04). */
export const CUSTOM_FIELD_EVENTS = ["CUSTOM_FIELD_CREATED", "CUSTOM_FIELD_DELETED", "CUSTOM_FIELD_UPDATED"] as const
/** Tag group (R-WEBHOOK-EVENT-05). */
export const TAG_EVENTS = ["TAG_CREATED", "TAG_DELETED", "TAG_UPDATED"] as const
/** Comment group (R-WEBHOOK-EVENT-06). */
export const COMMENT_EVENTS = ["COMMENT_CREATED", "COMMENT_DELETED", "COMMENT_UPDATED"] as const

/** Every subscribable `WebhookEvent` value. */
export const WEBHOOK_EVENTS = [
  ...RECORD_EVENTS,
  ...CHECKLIST_EVENTS,
  ...LIST_EVENTS,
  ...CUSTOM_FIELD_EVENTS,
  ...TAG_EVENTS,
  ...COMMENT_EVENTS
] as const

export const WebhookEvent = Schema.Literals(WEBHOOK_EVENTS)
export type WebhookEvent = typeof WebhookEvent.Type

/** Delivered when a webhook is re-enabled; not a `WebhookEvent`, cannot be subscribed (R-WEBHOOK-EVENT-07). */
export const WEBHOOK_HEALTH_CHECK = "WEBHOOK_HEALTH_CHECK" as const

export const isWebhookEvent = Schema.is(WebhookEvent)

export const WebhookStatus = Schema.Literals(["HEALTHY", "UNHEALTHY"])
export type WebhookStatus = typeof WebhookStatus.Type

/** Scoping data stored on a webhook; an empty array means "all". */
export const WebhookMetadata = openStruct({
  events: Schema.optional(Schema.Array(Schema.String)),
  projectIds: Schema.optional(Schema.Array(Schema.String))
})
export type WebhookMetadata = typeof WebhookMetadata.Type

/**
 * GraphQL `Webhook` (R-WEBHOOK-01). `events` is read as strings so a value added
 * by the service later does not break reads.
 */
export const Webhook = openStruct({
  id: Schema.String,
  uid: Schema.String,
  name: Schema.NullOr(Schema.String),
  url: Schema.String,
  secret: Schema.NullOr(Schema.String),
  status: WebhookStatus,
  events: Schema.NullOr(Schema.Array(Schema.String)),
  projectIds: Schema.NullOr(Schema.Array(Schema.String)),
  enabled: Schema.NullOr(Schema.Boolean),
  metadata: Schema.NullOr(WebhookMetadata),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
})
export type Webhook = typeof Webhook.Type

/** The `webhook` field of a delivery: the configuration without the secret. */
export const WebhookConfig = openStruct({
  id: Schema.String,
  uid: Schema.String,
  url: Schema.String,
  status: WebhookStatus,
  enabled: Schema.NullOr(Schema.Boolean),
  metadata: Schema.NullOr(WebhookMetadata)
})
export type WebhookConfig = typeof WebhookConfig.Type

/** A delivery body; `event` is any string, receivers tolerate unknown values (R-WEBHOOK-DELIVERY-18). */
export const WebhookDelivery = openStruct({
  event: Schema.String,
  webhook: WebhookConfig,
  previousValue: UnknownValue,
  currentValue: UnknownValue
})
export type WebhookDelivery = typeof WebhookDelivery.Type

/** `createWebhook` input (assumptions.ts WEBHOOK_INPUTS). */
export const CreateWebhookInput = openStruct({
  url: Schema.String,
  name: Schema.optional(Schema.NullOr(Schema.String)),
  events: Schema.optional(Schema.Array(WebhookEvent)),
  projectIds: Schema.optional(Schema.Array(Schema.String))
})
export type CreateWebhookInput = typeof CreateWebhookInput.Type

/** `updateWebhook` input (assumptions.ts WEBHOOK_INPUTS). */
export const UpdateWebhookInput = openStruct({
  id: Schema.String,
  url: Schema.optional(Schema.String),
  name: Schema.optional(Schema.NullOr(Schema.String)),
  events: Schema.optional(Schema.Array(WebhookEvent)),
  projectIds: Schema.optional(Schema.Array(Schema.String)),
  enabled: Schema.optional(Schema.Boolean)
})
export type UpdateWebhookInput = typeof UpdateWebhookInput.Type

/** `webhooks` query result: an object with `items` (R-WEBHOOK-08). */
export const WebhooksPage = openStruct({ items: Schema.Array(Webhook) })
export type WebhooksPage = typeof WebhooksPage.Type
