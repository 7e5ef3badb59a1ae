/** In-process event bus: mutations announce DomainEvents, the webhooks area listens. */
import type { DomainEvent, EventBus } from "./context.ts"

export const makeEventBus = (): EventBus => {
  const listeners = new Set<(event: DomainEvent) => void>()
  return {
    emit(event) {
      for (const listener of listeners) {
        // A failing listener must not fail the write that announced the event.
        try {
          listener(event)
        } catch {
          /* ignored */
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    }
  }
}
