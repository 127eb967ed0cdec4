import fs from 'node:fs'
import path from 'node:path'
import { connect, errors } from '@nats-io/transport-node'
import { startBank, storeIdentity } from './app.ts'
import type { Config } from './config.ts'
import { systemClock } from './clock.ts'
import { loadConfig } from './config.ts'
import { createLogger, type Logger } from './logger.ts'
import { natsConnectOptions, natsServerList } from './nats/nats-connect.ts'
import { toggleCpuProfileOnSigusr2 } from './profiling.ts'
import { owner_only_file_mode, ownerOnlyDataDir, ownerOnlyProcess } from './data-dir.ts'

// Composition root: config → NATS (given, or found or started by the development entry) →
// bank → signals. Nothing else. Two programs run it: src/main.ts (`node src/main.ts`: the
// Dockerfile, the systemd unit, the chaos tests, the benchmark) and dev/start.ts (`npm start`),
// which adds a NATS server of its own when none answers. It is a module of its own, not
// main.ts, so that neither program has to guess whether it was imported or run.
export const defaultNatsUrl = 'nats://127.0.0.1:4222'

/** A NATS server the bank started for itself, stopped when the bank stops. */
export interface LocalNats {
  url: string
  stop(): Promise<void>
}

export interface BankProcessOptions {
  /**
   * Development only (dev/start.ts, `npm start`): when NATS_URL is unset, finds a server at
   * the default address or starts a private one (undefined: use the default address).
   * Without it the bank uses NATS_URL or the default address, as a deployment does: starting
   * servers is not the service's business, and its image does not carry the helper.
   */
  localNats?: (config: Config, log: Logger) => Promise<LocalNats | undefined>
}

async function main(options: BankProcessOptions = {}): Promise<void> {
  const config = loadConfig()
  const log = createLogger(config.logLevel)
  // BANK_CPU_PROFILE_DIR set: SIGUSR2 starts, and the next stops, a CPU profile (npm run bench --
  // --profile).
  toggleCpuProfileOnSigusr2(log)
  // Owner-only data directory (src/data-dir.ts): the umask first, so that nothing this
  // process or its nats-server creates from here on is readable by others; then what an
  // earlier start left looser is tightened.
  ownerOnlyProcess()
  const tightened = ownerOnlyDataDir(config.dataDir)
  if (tightened.length > 0) {
    log.warn({ dir: config.dataDir, tightened: tightened.length, first: tightened[0] }, 'made ' +
      'files and folders of the data directory owner-only (0600/0700); they were readable by ' +
      'other users')
  }
  const natsUrlFile = path.join(config.dataDir, 'nats-url')

  const privateNats = config.natsUrl ? undefined : await options.localNats?.(config, log)
  const natsUrl = config.natsUrl ?? privateNats?.url ?? defaultNatsUrl

  const conflict = await conflictingInstance(natsUrl, config)
  if (conflict) {
    process.stderr.write(`${conflict}\n`)
    process.exit(2)
  }
  // The CLI finds the server through this file when NATS_URL is not set. Written once NATS
  // has answered and no other instance is in the way, and removed if the bank then fails to
  // start, so that a failed start leaves no file naming a server nobody serves on.
  fs.writeFileSync(natsUrlFile, `${natsUrl}\n`, { mode: owner_only_file_mode })
  // The signal handlers are in place before the bank starts: a SIGTERM that arrives while it
  // starts (a service manager that gives up early) stops it cleanly once it has started,
  // instead of killing the process half-way.
  const starting = startBank({ config, clock: systemClock, log, natsUrl })
  starting.catch(() => fs.rmSync(natsUrlFile, { force: true }))
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'stopping: no new requests, finishing those in flight')
    try {
      const bank = await starting
      await bank.stop()
      await privateNats?.stop()
      fs.rmSync(natsUrlFile, { force: true })
      process.exit(0)
    } catch (error) {
      log.error({ err: error }, 'unclean stop')
      process.exit(1)
    }
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
  const bank = await starting
  if (bank.database.storage === 'pglite') {
    log.warn('embedded PGlite storage: one process, no fsync (survives a crash, not a power ' +
      'cut); production runs on PostgreSQL (DATABASE_URL)')
  }
}

/**
 * Instances in one queue group must serve one store, or requests would be answered from
 * different databases. Asks `$SRV.PING` who is already serving and refuses to join a
 * group that uses other storage, or an embedded store another process already has open.
 */
async function conflictingInstance(natsUrl: string, config: Config): Promise<string | undefined> {
  const ours = storeIdentity(config)
  const nc = await connect({ servers: natsServerList(natsUrl), timeout: 2000,
      ...natsConnectOptions(config.natsAuth) }).catch((error: unknown) => {
    throw new Error(`cannot connect to NATS ` +
      `at ${natsUrl}: ${error instanceof Error ? error.message : String(error)}`)
  })
  try {
    const replies = await nc.requestMany(`$SRV.PING.${config.serviceName}`, '',
      { strategy: 'timer', maxWait: 500 })
    for await (const reply of replies) {
      const ping = JSON.parse(reply.string()) as {
        id?: string; metadata?: { storage?: string; store?: string } }
      const theirs = ping.metadata?.store
      if (theirs !== ours) {
        return (
          `Another ${config.serviceName} instance (${ping.id}) already serves on ${natsUrl} from ` +
          `different storage (${ping.metadata?.storage ?? 'unknown'}). Instances in one queue ` +
            `group must share one PostgreSQL database; ` +
          'stop that instance, point this one at the same DATABASE_URL, or use another NATS ' +
            'server (NATS_URL).'
        )
      }
      if (!config.databaseUrl) {
        return `Another ${config.serviceName} instance (${ping.id}) already has the embedded ` +
          `store in ${config.dataDir} open; PGlite is one process only. Stop it first, or run ` +
          `production on PostgreSQL (DATABASE_URL).`
      }
    }
    return undefined
  } catch (error) {
    // Nobody serving yet is the usual first start.
    if (error instanceof errors.NoRespondersError) return undefined
    throw error
  } finally {
    await nc.close()
  }
}

/** Runs the bank as this process's program; the message on stderr if it cannot start. */
export function run(options: BankProcessOptions = {}): void {
  main(options).catch((error: unknown) => {
    process.stderr.write(
      `partner bank failed to start: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
