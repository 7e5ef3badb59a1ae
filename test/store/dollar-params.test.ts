/**
 * The PostgreSQL stores take the `?` placeholders both backends speak and number them
 * for PostgreSQL. Only a `?` outside string literals, quoted identifiers and comments is
 * a placeholder: a query given to the snapshot's `select` may hold one as text.
 */
import { describe, expect, it } from "vitest"
import { dollarParams } from "../../src/store/postgres.ts"

describe("dollarParams", () => {
  it("numbers the placeholders in order", () => {
    expect(dollarParams("SELECT * FROM t WHERE a = ? AND b IN (?, ?)")).toBe("SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)")
  })

  it("leaves a `?` inside a string literal, a doubled quote included", () => {
    expect(dollarParams("SELECT 'why?', 'it''s ?' WHERE a = ?")).toBe("SELECT 'why?', 'it''s ?' WHERE a = $1")
  })

  it("leaves a `?` inside a quoted identifier", () => {
    expect(dollarParams(`SELECT x AS "ok?", "a""?" FROM t WHERE a = ?`)).toBe(`SELECT x AS "ok?", "a""?" FROM t WHERE a = $1`)
  })

  it("leaves a `?` inside a line comment and a block comment", () => {
    expect(dollarParams("SELECT 1 -- why?\nWHERE a = ? /* b = ? */ AND c = ?")).toBe("SELECT 1 -- why?\nWHERE a = $1 /* b = ? */ AND c = $2")
  })

  it("an unterminated literal or comment runs to the end, and nothing in it is numbered", () => {
    expect(dollarParams("SELECT ? WHERE a = 'open ?")).toBe("SELECT $1 WHERE a = 'open ?")
    expect(dollarParams("SELECT ? /* open ?")).toBe("SELECT $1 /* open ?")
  })
})
