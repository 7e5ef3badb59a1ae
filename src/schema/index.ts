/**
 * Every documented shape and operation input, shared by the client and the emulator.
 */
export * from "./activity.ts"
export * from "./assumptions.ts"
export * from "./comments.ts"
export * from "./dates.ts"
export * from "./decode.ts"
export * from "./errors.ts"
export * from "./files.ts"
export * from "./inputs.ts"
export * from "./limits.ts"
export * from "./open.ts"
export * from "./paging.ts"
export * from "./records.ts"
export * from "./uploads.ts"
export * from "./users.ts"
export * from "./webhooks.ts"
export * from "./workspaces.ts"
