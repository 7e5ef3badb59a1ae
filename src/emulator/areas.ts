/**
 * The fixed list of emulator areas, in start-up order: the core first (its tables are
 * the ones the others join), then GraphQL, webhooks and uploads.
 */
import type { EmulatorArea } from "./context.ts"
import { coreArea } from "./core/area.ts"
import { graphqlArea } from "./graphql/area.ts"
import { uploadsArea } from "./uploads/area.ts"
import { webhooksArea } from "./webhooks/area.ts"

export const areas: ReadonlyArray<EmulatorArea> = [coreArea, graphqlArea, webhooksArea, uploadsArea]
