import type { Kysely } from 'kysely'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Database } from './schema.ts'
import { SouthAfricanCalendar } from './calendar/sa-calendar.ts'
import type { Logger } from './logger.ts'
import { BankMetrics } from './metrics/bank-metrics.ts'
import type { Module, ModuleContext, ServicesOf } from './module.ts'
import type { modules } from './modules.ts'
import { SecretBox } from './secrets/secret-box.ts'
import type { DecisionTransport } from './cards/card-decisions.ts'
import type { MandateAuthenticator } from './debit/mandate-authenticator.ts'
import type { Dropbox } from './kyc/dropbox.ts'
import type { CompanyRegistry } from './kyc/company-registry.ts'
import type { NatsIdentity } from './nats-identity/nats-identity.ts'
import type { MovableClock } from './sandbox/sandbox-clock.ts'

// The bank's services, derived from its modules (src/modules.ts): each module builds its own
// (its declaration's `services`, from the services of the modules it `needs`), and the bank's
// `Services` is all of them by name, with the toolkits every capability shares. Nothing here
// names a capability: adding one is its folder and its line in src/modules.ts.

/** The toolkits every module may use without naming them in its needs. */
export interface Toolkits {
  /** South African business days and SAST (src/calendar). */
  calendar: SouthAfricanCalendar
  /** Prometheus metrics of this instance (served when BANK_METRICS_PORT is set). */
  metrics: BankMetrics
  /** The box that seals the bank's secrets (src/secrets). */
  secretBox: SecretBox
}

/** Every module's services by name, and the toolkits. */
export type Services = ServicesOf<typeof modules> & Toolkits

/**
 * What the composition root is given instead of building it from the settings: the sandbox's
 * clock and the lease clock, and the outside world's stand-ins (mandate authentication,
 * dropboxes, the company registry, the secrets box, the NATS authority, partners' card
 * decisions), which tests and the bank process hand over.
 */
export interface ServiceOverrides {
  /** The sandbox's movable clock (the same time as `clock`); absent in production. */
  sandboxClock?: MovableClock | undefined
  /** The clock job leases are measured on; the system clock unless a test controls it. */
  wallClock?: Clock | undefined
  /**
   * Who authenticates new mandates for the debtor's bank; accepts every mandate at once unless
   * given.
   */
  mandateAuthenticator?: MandateAuthenticator | undefined
  /**
   * The partners' document dropboxes (JetStream Object Store); refused as unavailable unless given.
   */
  dropbox?: Dropbox | undefined
  /** The company registry KYB asks for directors; the simulated one unless given. */
  registry?: CompanyRegistry | undefined
  /** The box that seals the bank's secrets (made from the settings unless given). */
  secretBox?: SecretBox | undefined
  /**
   * The bank as the NATS authority of its partners (`bank nats init`); absent on an open NATS
   * server.
   */
  natsIdentity?: NatsIdentity | undefined
  /** How the bank asks partners' card decisions over NATS; without it, each gets the stand-in. */
  cardDecisions?: DecisionTransport | undefined
}

/** The bank's services from the given modules (all of src/modules.ts unless a test says). */
export function createServices(list: readonly Module[], db: Kysely<Database>, clock: Clock,
    config: Config, log: Logger, given: ServiceOverrides = {}): Services {
  const metrics = new BankMetrics()
  metrics.readFrom(db)
  const toolkits: Toolkits = {
    calendar: new SouthAfricanCalendar(config.declaredHolidays),
    metrics,
    secretBox: given.secretBox
      ?? new SecretBox({ key: config.secretsKey, dataDir: config.dataDir }),
  }
  return composeServices(list, toolkits, { db, clock, config, log, given })
}

/**
 * Builds each module's services, a module after those it needs, handing it the services built
 * so far. A module that uses a service of a module it does not need, or needs a module not in
 * the list, or two that need each other, stop the start with a sentence that names them.
 */
export function composeServices(list: readonly Module[], toolkits: Toolkits,
    bank: ModuleContext): Services {
  const built = new Map<string, unknown>(Object.entries(toolkits))
  const owners = new Map<string, string>()
  for (const module of buildOrder(list)) {
    if (!module.services) continue
    const made = module.services(neededBy(module, built, owners), bank)
    for (const [name, service] of Object.entries(made)) {
      if (built.has(name)) {
        const owner = owners.get(name)
        const first = owner === undefined ? 'the toolkits' : `module ${owner}`
        throw new Error(`service ${name} is built by ${first} and by module ${module.name}`)
      }
      built.set(name, service)
      owners.set(name, module.name)
    }
  }
  return Object.fromEntries(built) as Services
}

/**
 * The services a module's factory sees: the toolkits and those of the modules it needs; any
 * other name throws (a need it forgot to declare would otherwise be built after it).
 */
function neededBy(module: Module, built: ReadonlyMap<string, unknown>,
    owners: ReadonlyMap<string, string>): Services {
  const needs = new Set(module.needs ?? [])
  const view = new Proxy({}, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined
      const owner = owners.get(name)
      if (owner !== undefined && !needs.has(owner))
        throw new Error(`module ${module.name} uses ${name} of module ${owner}, ` +
          `which is not in its needs`)
      if (!built.has(name))
        throw new Error(`module ${module.name} uses ${name}, which no module it needs builds`)
      return built.get(name)
    },
  })
  return view as Services
}

/** The modules in an order where each comes after those it needs. */
export function buildOrder(list: readonly Module[]): Module[] {
  const byName = new Map(list.map((m) => [m.name, m]))
  const order: Module[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (module: Module, path: readonly string[]): void => {
    const seen = state.get(module.name)
    if (seen === 'done') return
    if (seen === 'visiting')
      throw new Error(`modules need each other: ${[...path, module.name].join(' → ')}`)
    state.set(module.name, 'visiting')
    for (const need of module.needs ?? []) {
      const needed = byName.get(need)
      if (!needed) throw new Error(`module ${module.name} needs ${need}, which is not a module`)
      visit(needed, [...path, module.name])
    }
    state.set(module.name, 'done')
    order.push(module)
  }
  for (const module of list) visit(module, [])
  return order
}
