import type { Kysely } from 'kysely'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Migrations } from './db/migrations.ts'
import type { EventPattern } from './events/event-types.ts'
import type { Logger } from './logger.ts'
import type { Database } from './schema.ts'
import type { ServiceOverrides, Services } from './services.ts'
import type { Endpoint } from './transport/nats/endpoint.ts'

// A capability is one folder and declares itself in one place,
// src/<folder>/<folder>-module.ts: its name, the migrations that make its tables and their
// types, the services it builds (from the other modules' services it needs), its limits, the
// operations it serves (each bound to its handler), the job kinds it runs and the events it
// subscribes to. The composition root lists the modules (src/modules.ts) and derives the rest
// from that list: the bank's `Database` type (src/schema.ts) is every module's tables, its
// `Services` (src/services.ts) every module's services, built in the order of their needs;
// openDatabase runs their migrations, the NATS service (app.ts) serves their endpoints, and
// app.ts holds the job kinds and subscriptions the services registered at start against what
// the modules declare (a kind run but declared by no module stops the start). Adding a
// capability is its folder and one line in src/modules.ts.

// `Module` alone is a module of any tables (`any`: a context typed with a module's own tables
// must not stop it joining a list of modules of other tables).
export interface Module<S extends object = object, T extends object = any> {
  /** The capability's folder under src/. */
  name: string
  /**
   * The migrations that make and change its tables, by their shipped names ('0007_bulk_payments').
   * Names are global and run in their order, whichever module declares them; a shipped one is
   * never renamed, edited or moved out of the list.
   */
  migrations?: Migrations
  /**
   * The modules (by name) whose services its `services` uses: they are built before it. A
   * service of a module not named here is refused at start (composeServices).
   */
  needs?: readonly string[]
  /**
   * Builds its services from those of the modules it needs and the bank's context (its
   * store, clock, settings, log and the stand-ins it was given); each becomes a member of
   * the bank's `Services` by its name.
   */
  services?: (needed: Services, bank: ModuleContext<T>) => S
  /**
   * Its types, for the composition root alone (never set): `services`, what its factory
   * builds; `tables`, the tables its migrations make, which join the bank's `Database`.
   */
  readonly types?: { services: S; tables: T }
  /**
   * Tables of other modules its code queries, each with the reason (a read model, a join
   * that one index serves on a hot path). Any other use of another module's tables goes
   * through that module's service; test/docs/modules.test.ts holds the code to this list.
   */
  reads?: Readonly<Record<string, string>>
  /** Its bounds (sizes, counts, times) and the defaults of its configurable ones. */
  limits?: Limits
  /**
   * The operations it serves, each bound to its handler (transport/nats/endpoint.ts): one line
   * each, since the wrapper has authenticated, checked tenancy and validated already. (A
   * method: the bank hands it all services, its own among them.)
   */
  endpoints?(services: Services & S): Endpoint[]
  /** The job kinds its services register with the runner (src/jobs). */
  jobKinds?: readonly string[]
  /** The event patterns its services subscribe to (src/events). */
  subscriptions?: readonly EventPattern[]
}

/**
 * What every module's services are built with, beside the services it needs and the toolkits
 * (services.ts): the bank's store and clock, its settings and log, and what the composition
 * root was given instead of building it (ServiceOverrides: the sandbox's clock, the outside
 * world's stand-ins).
 */
export interface ModuleContext<T extends object = object> {
  /** The store, typed with the bank's tables and the module's own (a test's fixture's too). */
  db: Kysely<Database & T>
  clock: Clock
  config: Config
  log: Logger
  given: ServiceOverrides
}

/** The union of U's members as one intersection. */
export type Intersection<U> =
  (U extends unknown ? (member: U) => void : never) extends (member: infer I) => void ? I : never

/** What a list of modules builds: every module's services, by their names. */
export type ServicesOf<M extends readonly Module[]> =
  Intersection<NonNullable<M[number]['types']>['services']>

/** The tables a list of modules makes: every module's tables. */
export type TablesOf<M extends readonly Module[]> =
  Intersection<NonNullable<M[number]['types']>['tables']>

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
