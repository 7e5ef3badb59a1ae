/**
 * People of a tool's export resolved to workspace users (presets/people.ts): the people
 * file first, as migrate reads it, then the person's own e-mail, then the one user of
 * that full name.
 */
import { describe, expect, it } from "vitest"
import { type PeopleDirectory, resolvePerson } from "../../../src/connectors/presets/people.ts"
import { readPeopleFile, SKIP } from "../../../src/sync/mapping-files.ts"

const directory = (file: string): PeopleDirectory => {
  const read = readPeopleFile("people.csv", file)
  if ("error" in read) throw new Error(read.error)
  return {
    byEmail: new Map([["ann@example.com", "u1"], ["bob@old.example", "u2"], ["bob@new.example", "u3"], ["cy@example.com", "u4"]]),
    byName: new Map([["cy person", "cy@example.com"]]),
    file: read
  }
}

describe("resolvePerson", () => {
  it("a person the file names is mapped by it even when the workspace knows their own e-mail; others by e-mail, then by full name", () => {
    const dir = directory("name,email\nann@example.com,skip\nBob Old,bob@new.example\n")
    // The file's skip and its other e-mail win over the person's own, a user of the workspace.
    expect(resolvePerson(dir, { email: "Ann@example.com", name: "Ann" })).toBe(SKIP)
    expect(resolvePerson(dir, { email: "bob@old.example", name: "Bob Old" })).toBe("bob@new.example")
    expect(dir.file!.use().unused).toEqual([])
    // Not in the file: their own e-mail, else the one user of that full name.
    expect(resolvePerson(dir, { email: "bob@old.example", name: "Robert" })).toBe("bob@old.example")
    expect(resolvePerson(dir, { name: "Cy Person" })).toBe("cy@example.com")
    expect(resolvePerson(dir, { email: "dee@example.com", name: "Dee" })).toBeUndefined()
  })

  it("a person the file maps to an e-mail the workspace does not know stays unresolved, though their own e-mail or name is a user's", () => {
    const dir = directory("name,email\nCy Person,cy@elsewhere.example\nann@example.com,ann@elsewhere.example\n")
    expect(resolvePerson(dir, { name: "Cy Person" })).toBeUndefined()
    expect(resolvePerson(dir, { email: "ann@example.com", name: "Ann" })).toBeUndefined()
  })
})
