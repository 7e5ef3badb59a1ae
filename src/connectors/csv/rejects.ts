import { stringify } from "csv-stringify"
import * as fs from "node:fs"

/** A writer of the rejects file, opened on the first reject. */
export const rejectsWriter = (file: string | undefined, header: ReadonlyArray<string>) => {
  let stream: ReturnType<typeof stringify> | undefined
  let out: fs.WriteStream | undefined
  let count = 0
  const columns = [...header, "row", "error"]
  const open = () => {
    if (file === undefined || stream !== undefined) return
    out = fs.createWriteStream(file, { mode: 0o600 })
    stream = stringify({ header: true, columns })
    stream.pipe(out)
  }
  return {
    write: (values: ReadonlyArray<string>, line: number, error: string) => {
      count++
      open()
      if (stream === undefined) return
      const rec = header.map((_, i) => values[i] ?? "")
      // Extra unnamed fields are kept at the end so nothing of the row is lost.
      const extra = values.slice(header.length)
      stream.write([...rec, String(line), extra.length > 0 ? `${error} (extra fields: ${extra.join(" | ")})` : error])
    },
    /** Waits while the file is behind (millions of rejects must not pile up in memory). */
    drain: (): Promise<void> =>
      stream === undefined || !stream.writableNeedDrain
        ? Promise.resolve()
        : new Promise((resolve) => stream!.once("drain", () => resolve())),
    /** Writes a header-only file when asked explicitly and nothing was rejected. */
    finish: (always: boolean): Promise<void> =>
      new Promise((resolve, reject) => {
        if (always) open()
        if (stream === undefined || out === undefined) return resolve()
        out.on("finish", () => resolve())
        out.on("error", reject)
        stream.end()
      }),
    get count() {
      return count
    }
  }
}
