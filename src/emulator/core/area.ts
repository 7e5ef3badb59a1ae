/** The core area: the shared tables and the REST operations over records and their neighbours. */
import type { EmulatorArea } from "../context.ts"
import { activityOperations } from "./activity.ts"
import { CORE_DDL } from "./ddl.ts"
import { extraOperations } from "./extras.ts"
import { listOperations } from "./lists.ts"
import { recordOperations } from "./records.ts"
import { tagOperations } from "./tags.ts"
import { userOperations } from "./users.ts"
import { workspaceOperations } from "./workspaces.ts"

export const coreArea: EmulatorArea = {
  name: "core",
  ddl: CORE_DDL,
  operations: [
    ...recordOperations,
    ...activityOperations,
    ...workspaceOperations,
    ...listOperations,
    ...tagOperations,
    ...userOperations,
    ...extraOperations
  ]
}
