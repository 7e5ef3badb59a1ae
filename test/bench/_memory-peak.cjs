// Preloaded into a command by the growth benchmark with `memory=1` (node --require):
// samples the process's memory every 20 ms and, on exit, prints to stderr the sample
// taken at the highest RSS and the highest of each part, so a peak can be told apart
// into V8's heap (used and reserved, by space), external memory and array buffers, and
// what is neither (SQLite's caches and maps, code, other threads' heaps). It also prints
// the most heap left live after a full collection (`memory_live`): what the command holds,
// without the garbage a sample at the peak counts; with GROWTH_TRACE_GC=1 (growth.ts
// `gc=1`) V8 traces every collection to stdout (--trace-gc is refused in NODE_OPTIONS).
"use strict"
const fs = require("node:fs")
const v8 = require("node:v8")
const mb = (n) => Math.round(n / 104857.6) / 10
let atPeak
const highest = { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }
const sample = () => {
  const m = process.memoryUsage()
  for (const k of Object.keys(highest)) if (m[k] > highest[k]) highest[k] = m[k]
  if (atPeak === undefined || m.rss > atPeak.rss) {
    const spaces = {}
    for (const s of v8.getHeapSpaceStatistics()) if (s.space_size > 0) spaces[s.space_name.replace(/_space$/, "")] = [mb(s.space_used_size), mb(s.space_size)]
    // The kernel's split of the RSS: anonymous (heaps, malloc) against mapped files (code, SQLite's map).
    const status = {}
    try {
      for (const [, k, v] of fs.readFileSync("/proc/self/status", "utf8").matchAll(/^(RssAnon|RssFile|Threads):\s+(\d+)/gm)) status[k] = Number(v)
    } catch {
      // not Linux
    }
    atPeak = { ...m, anon: (status.RssAnon ?? 0) * 1024, file: (status.RssFile ?? 0) * 1024, threads: `${status.Threads}`, spaces }
  }
}
setInterval(sample, 20).unref()
if (process.env.GROWTH_TRACE_GC === "1") v8.setFlagsFromString("--trace-gc")
let liveMax = 0
let fullGcs = 0
const { PerformanceObserver, constants } = require("node:perf_hooks")
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue
    fullGcs++
    const used = process.memoryUsage().heapUsed
    if (used > liveMax) liveMax = used
  }
}).observe({ entryTypes: ["gc"] })
process.once("exit", () => {
  sample()
  const fmt = (o) => Object.entries(o).map(([k, v]) => `${k}=${typeof v === "number" ? mb(v) : typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")
  process.stderr.write(`memory_peak ${fmt(atPeak)}\nmemory_highest ${fmt(highest)}\nmemory_live heapUsed_after_full_gc_max=${mb(liveMax)} full_gcs=${fullGcs}\n`)
})
