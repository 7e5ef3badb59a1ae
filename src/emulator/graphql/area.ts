/**
 * The GraphQL area: `POST /graphql`, the avatar images of `User.image`, and the tables of invitations, custom roles and
 * comment attachments. Webhook tables belong to the webhooks area.
 */
import type { EmulatorArea } from "../context.ts"
import { avatarRoute } from "./avatars.ts"
import { GRAPHQL_DDL } from "./ddl.ts"
import { graphqlRoute } from "./route.ts"

export const graphqlArea: EmulatorArea = {
  name: "graphql",
  ddl: GRAPHQL_DDL,
  routes: [graphqlRoute, avatarRoute]
}
