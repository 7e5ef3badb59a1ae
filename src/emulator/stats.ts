/** Request counters by route and status (benchmarks and incremental-backup tests read them). */
import type { RequestStats } from "./context.ts"

export class StatsRecorder {
  private total = 0
  private byRoute: Record<string, number> = {}
  private byStatus: Record<string, number> = {}
  /** Counts by "route status", e.g. "list-records 200". */
  private byRouteStatus: Record<string, number> = {}

  record(route: string, status: string): void {
    this.total++
    this.byRoute[route] = (this.byRoute[route] ?? 0) + 1
    this.byStatus[status] = (this.byStatus[status] ?? 0) + 1
    const key = `${route} ${status}`
    this.byRouteStatus[key] = (this.byRouteStatus[key] ?? 0) + 1
  }

  snapshot(): RequestStats & { readonly byRouteStatus: Readonly<Record<string, number>> } {
    return {
      total: this.total,
      byRoute: { ...this.byRoute },
      byStatus: { ...this.byStatus },
      byRouteStatus: { ...this.byRouteStatus }
    }
  }

  reset(): void {
    this.total = 0
    this.byRoute = {}
    this.byStatus = {}
    this.byRouteStatus = {}
  }
}
