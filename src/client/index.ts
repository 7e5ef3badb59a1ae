/**
 * The client: the only code that speaks HTTP to the service.
 */
export * from "./config.ts"
export * from "./errors.ts"
export * from "./graphql-client.ts"
export * from "./layer.ts"
export * from "./limiter.ts"
export * from "./multipart.ts"
export * from "./predicates.ts"
export * from "./responses.ts"
export * from "./rest-client.ts"
export * from "./retry.ts"
export * from "./uploads.ts"
