import type { Migrations } from './db/migrations.ts'
import type { EventPattern } from './events/event-types.ts'
import type { Services } from './services.ts'
import type { Endpoint } from './transport/nats/endpoint.ts'

// A capability declares itself in one place, src/<folder>/<folder>-module.ts: its name, the
// migrations that make its tables, its limits, the operations it serves (each bound to its
// handler), the job kinds it runs and the events it subscribes to. The composition root
// lists the modules (src/modules.ts) and collects from them: the migrations for
// openDatabase, the endpoints for the NATS service (app.ts), and the job kinds and
// subscriptions, which app.ts holds against what the services registered at start (a kind
// run but declared by no module stops the start). Its tables' types join
// the bank's Database in src/schema.ts; its service is built in src/services.ts. Adding a
// capability is its folder and one line in each of those three files.

export interface Module {
  /** The capability's folder under src/. */
  name: string
  /**
   * The migrations that make and change its tables, by their shipped names ('0007_bulk_payments').
   * Names are global and run in their order, whichever module declares them; a shipped one is
   * never renamed, edited or moved out of the list.
   */
  migrations?: Migrations
  /** Its bounds (sizes, counts, times) and the defaults of its configurable ones. */
  limits?: Limits
  /**
   * The operations it serves, each bound to its handler (transport/nats/endpoint.ts): one line
   * each, since the wrapper has authenticated, checked tenancy and validated already.
   */
  endpoints?: (services: Services) => Endpoint[]
  /** The job kinds its services register with the runner (src/jobs). */
  jobKinds?: readonly string[]
  /** The event patterns its services subscribe to (src/events). */
  subscriptions?: readonly EventPattern[]
}

/**
 * Bounds by name, each with its unit last (`batch_items_max`, `otp_ttl_ms`); a group of them
 * (one job kind's retries and lease) nests under the group's name.
 */
export interface Limits {
  readonly [name: string]: number | bigint | Limits
}

/**
 * Every module's migrations in one registry, in the order they run (by name); a name declared twice
 * throws.
 */
export function migrationsOf(modules: readonly Module[]): Migrations {
  const all: Migrations = {}
  for (const module of modules) {
    for (const [name, migration] of Object.entries(module.migrations ?? {})) {
      if (name in all)
        throw new Error(
          `migration ${name} is declared twice (the second time by module ${module.name})`,
        )
      all[name] = migration
    }
  }
  return Object.fromEntries(Object.entries(all).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Every module's endpoints, in the order of the modules. */
export function endpointsOf(modules: readonly Module[], services: Services): Endpoint[] {
  return modules.flatMap((module) => module.endpoints?.(services) ?? [])
}

/**
 * What the services registered or subscribed that no module declares, each a sentence; empty
 * when all is declared. (A declared kind may be off by configuration: clearing's recurring
 * RTC recovery runs only with the schedule on.)
 */
export function undeclared(
  modules: readonly Module[],
  registered: { jobKinds: Iterable<string>; subscriptions: Iterable<string> },
): string[] {
  const kinds = new Set(modules.flatMap((m) => m.jobKinds ?? []))
  const patterns = new Set<string>(modules.flatMap((m) => m.subscriptions ?? []))
  const problems: string[] = []
  for (const k of registered.jobKinds) {
    if (!kinds.has(k)) problems.push(`job kind ${k} is declared by no module`)
  }
  for (const p of registered.subscriptions) {
    if (!patterns.has(p)) problems.push(`subscription ${p} is declared by no module`)
  }
  return problems
}
