/**
 * The CSV the import benchmarks plan (import.ts, import-plan.ts): `key,title,description,
 * list,duedAt,done,tags`, one row per task, written in 1 MiB pieces.
 */
import * as fs from "node:fs"

/**
 * Due dates as real exports hold them: 3,650 distinct days (ten years) in scattered order,
 * and every fourth row a timed value of its own, so the per-text date memo of the row
 * parser meets misses as well as hits.
 */
const DAYS = Array.from({ length: 3650 }, (_, d) => new Date(Date.UTC(2020, 0, 1 + d)).toISOString().slice(0, 10))
const dueOf = (i: number) =>
  i % 4 === 3
    ? `${DAYS[i % 3650]}T${String(i % 24).padStart(2, "0")}:${String((i >> 5) % 60).padStart(2, "0")}:00Z`
    : DAYS[(i * 7919) % 3650]

/** Writes `rows` data rows (plus the header) to `file`. */
export const writeImportCsv = (file: string, rows: number): void => {
  const fd = fs.openSync(file, "w")
  fs.writeSync(fd, "key,title,description,list,duedAt,done,tags\n")
  let buf = ""
  for (let i = 0; i < rows; i++) {
    buf += `${i},Task number ${i},"Some description, with a comma",${i % 2 ? "Backlog" : "Doing"},${dueOf(i)},${i % 3 ? "no" : "yes"},a;b\n`
    if (buf.length > 1 << 20) {
      fs.writeSync(fd, buf)
      buf = ""
    }
  }
  fs.writeSync(fd, buf)
  fs.closeSync(fd)
}

/**
 * The same export with every (1/`fraction`)-th row's title changed, as a newer export of
 * the same tool (a delta pass's file); returns how many rows changed.
 */
export const renameTitles = (file: string, fraction: number): number => {
  const every = Math.max(1, Math.round(1 / fraction))
  const lines = fs.readFileSync(file, "utf8").split("\n")
  let changed = 0
  for (let i = 1; i < lines.length; i++) {
    if ((i - 1) % every !== 0 || lines[i] === "") continue
    lines[i] = lines[i]!.replace(/^(\d+),Task number (\d+),/, "$1,Task number $2 (renamed),")
    changed++
  }
  fs.writeFileSync(file, lines.join("\n"))
  return changed
}
