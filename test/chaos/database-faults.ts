import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { connect } from '@nats-io/transport-node'
import { BankClient, OperatorClient } from '../../src/client/index.ts'
import { businessEntity } from '../support/fixtures.ts'
import { loadLimits, type ChaosBank, type TransferLoad } from './load.ts'
import { Cleanup, ServiceProcess, tempDir, withClient } from './processes.ts'

// What the database-fault chaos tests (database-stall, database-disk-full) share: a bank
// whose clients wait as long as the test may run, so that a request without a reply shows
// as a test that never ends rather than as the client's 504; the processes of the test's
// own PostgreSQL cluster, to pause; a small filesystem of the test's own, to fill.

/** The test's own deadline: every wait below ends with it, none with a timer of its own. */
export const faultLimits = {
  test_timeout_ms: 180_000,
  /** Above the test's timeout: a reply that never comes fails the test, not the request. */
  client_timeout_ms: 600_000,
  /** Failed attempts that show every sender has met the fault. */
  failures_min: loadLimits.concurrency,
}

/** Like setUpBank (load.ts), with clients that wait for the bank's reply however long it takes. */
export async function setUpPatientBank(natsUrl: string, dataDir: string): Promise<ChaosBank> {
  const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 250 })
  const token = fs.readFileSync(path.join(dataDir, 'operator-token'), 'utf8').trim()
  const timeoutMs = faultLimits.client_timeout_ms
  const operator = new OperatorClient({ connection: nc, token, timeoutMs })
  const root = businessEntity()
  const created = await operator.partners.create({
    name: root.name,
    email: root.email,
    registration_number: root.registration_number,
    trading_name: root.trading_name,
  })
  await operator.entities.review({ entity_id: created.root_entity_id, decision: 'approve' })
  const client = new BankClient({
    connection: nc,
    token: created.credential.token,
    partnerId: created.partner_id,
    timeoutMs,
  })
  const { accounts: existing } = await client.accounts.getByEntity({
    entity_id: created.root_entity_id,
  })
  const accounts = existing.map((a) => a.account_id)
  while (accounts.length < loadLimits.accounts) {
    accounts.push((await client.accounts.create({ entity_id: created.root_entity_id })).account_id)
  }
  for (const account_id of accounts) {
    await operator.accounts.deposit({
      account_id,
      amount: loadLimits.account_funding_cents,
      ref: 'chaos funding',
    })
  }
  return {
    nc,
    operator,
    client,
    partnerId: created.partner_id,
    rootEntityId: created.root_entity_id,
    accounts,
    webhookSecret: created.webhook_secret,
  }
}

/** Replies the load has had so far, of every code. */
export function replies(load: TransferLoad): number {
  let n = 0
  for (const count of load.codes.values()) n += count
  return n
}

/** Milliseconds since `from` (performance.now()), to a tenth. */
export function since(from: number): number {
  return Math.round((performance.now() - from) * 10) / 10
}

// ---------------------------------------------------------------- the cluster's processes

function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return undefined
  }
}

/**
 * The postmaster of the cluster at `url` (the test's own, on its own port) and every
 * process it has started: the parent of a backend serving this test's connection, and
 * that parent's children. Nothing else is ever signalled.
 */
export async function clusterProcesses(url: string): Promise<number[]> {
  // Read while the backend is there: it exits with the connection.
  const postmaster = await withClient(url, async (c) => {
    const backend = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid
    const parent = parentOf(backend)
    if (!parent) throw new Error(`no parent process of backend ${backend}`)
    return parent
  })
  const children = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => parentOf(pid) === postmaster)
  return [postmaster, ...children]
}

/** Sends `signal` to each process; one that has exited meanwhile is skipped. */
export function signalEach(pids: readonly number[], signal: 'SIGSTOP' | 'SIGCONT'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error
    }
  }
}

// ---------------------------------------------------------------- a filesystem to fill

/**
 * A tmpfs of `sizeMb` mounted on a directory of the test's own, owned by `owner`, or
 * undefined when this process may not mount one (not root, or no mount rights here).
 * `cleanup` unmounts it; whatever uses it must have been stopped by then.
 */
export function smallFilesystem(
  cleanup: Cleanup,
  sizeMb: number,
  owner: string,
): string | undefined {
  if (process.getuid?.() !== 0) return undefined
  const dir = tempDir(cleanup, 'bank-chaos-tmpfs-')
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], {
      stdio: 'pipe',
    })
  } catch {
    return undefined
  }
  cleanup.add(() => execFileSync('umount', [dir], { stdio: 'pipe' }))
  execFileSync('chown', [`${owner}:`, dir], { stdio: 'pipe' })
  return dir
}

/** The replies of each code the load has had since `before` (a copy of its codes then). */
export function codesSince(
  load: TransferLoad,
  before: ReadonlyMap<string, number>,
): Record<string, number> {
  return Object.fromEntries([...load.codes].map(([code, n]) => [code, n - (before.get(code) ?? 0)]))
}

/** The bank as its own process on `databaseUrl`, and a partner with patient clients. */
export async function startFaultBank(cleanup: Cleanup, natsUrl: string, databaseUrl: string) {
  const env = { natsUrl, databaseUrl, dataDir: tempDir(cleanup, 'bank-chaos-data-') }
  const service = await ServiceProcess.start(env, cleanup)
  const bank = await setUpPatientBank(natsUrl, env.dataDir)
  cleanup.add(() => bank.nc.close())
  return { service, bank }
}
