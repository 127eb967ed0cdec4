import type { Migrations } from './db/migrations.ts'

// A capability declares itself in one place, src/<folder>/<folder>-module.ts: its name, the
// migrations that make its tables, its limits. The composition root lists the modules
// (src/modules.ts) and collects from them; its tables' types join the bank's Database in
// src/schema.ts. Adding a capability is its folder and one line in each of those two files.
// The declaration grows as the composition root learns to collect more from it (its
// operations, job kinds, event subscriptions).

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
