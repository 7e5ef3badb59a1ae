/**
 * PostgreSQL URLs as every part of worksync reads them (stores, the engine, the shared
 * rate limiter): what is one, which schema names are plain, and how one is shown. Apart
 * from the driver, so that the client can use it without loading a database library.
 */

/** Whether a location names a PostgreSQL database rather than a file. */
export const isPostgresUrl = (location: string): boolean => /^postgres(ql)?:\/\//i.test(location)

/** A schema name used as it is in SQL: lower-case letters, digits and _, at most 63. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/** The URL with its password hidden, for every message, log and error. */
export const redactUrl = (location: string): string => {
  try {
    const u = new URL(location)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return location.replace(/\/\/([^:/@]*):[^@]*@/, "//$1:***@")
  }
}
