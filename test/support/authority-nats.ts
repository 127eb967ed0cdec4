import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { systemClock } from '../../src/clock.ts'
import type { Config } from '../../src/config.ts'
import { openDatabase } from '../../src/db/database.ts'
import { migrations } from '../../src/modules.ts'
import type { Database } from '../../src/schema.ts'
import { initNatsDeployment } from '../../src/nats-identity/nats-init.ts'
import type { NatsAuth } from '../../src/nats/nats-connect.ts'
import { findNatsServerBinary, freePort, natsMissingMessage, startNatsServer, type PrivateNatsServer } from '../../dev/nats-server.ts'
import { SecretBox } from '../../src/secrets/secret-box.ts'

// NATS as docs/operations.md sets it up for production: `bank nats init` (the same function
// the command runs) against the test bank's own database, then a nats-server of the test's
// own on the configuration it wrote. Nothing is changed in that configuration.

export interface AuthorityNats {
  url: string
  dir: string
  configFile: string
  caFile: string
  bankCredsFile: string
  operatorCredsFile: string
  /** How the bank logs in (NATS_CREDS=bank.creds, NATS_TLS_CA=ca.pem). */
  bankLogin: NatsAuth
  /** How an operator's CLI logs in (NATS_CREDS=operator.creds, NATS_TLS_CA=ca.pem). */
  operatorLogin: NatsAuth
  server: PrivateNatsServer
  stop(): Promise<void>
}

export async function startAuthorityNats(
  config: Config,
  dataDir: string,
  store: { databaseUrl?: string | undefined; pglite?: PGlite | undefined; pgliteDir: string;
    pgliteSeed?: Blob | undefined },
): Promise<AuthorityNats> {
  const binary = findNatsServerBinary()
  if (!binary) throw new Error(natsMissingMessage)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bank-nats-authority-'))
  const port = await freePort()
  const database = await openDatabase<Database>({ databaseUrl: store.databaseUrl,
    pglite: store.pglite, pgliteDir: store.pgliteDir, pgliteSeed: store.pgliteSeed, poolMax: 1,
    migrations })
  let result
  try {
    const box = new SecretBox({ key: config.secretsKey, dataDir })
    // A test file onboards dozens of partners (1 GiB of JetStream disk each by default), more
    // than this machine's free disk might let `bank nats init` size max_file_store for, and the
    // bank refuses partners past it (jetstream-quota.ts); the test servers get room for them
    // (nothing is written near it).
    result = await initNatsDeployment({ db: database.db, box, clock: systemClock, dir,
      listen: `127.0.0.1:${port}`, serverNames: ['localhost', '127.0.0.1'],
      jetstreamDisk: 64 * 1024 ** 4, jetstreamMemory: 1024 ** 4 })
  } finally {
    await database.close()
  }
  const server = await startNatsServer({ binary, storeDir: path.join(dir, 'jetstream'), port,
    configFile: result.files.config })
  const caFile = result.files.ca
  return {
    url: server.url,
    dir,
    configFile: result.files.config,
    caFile,
    bankCredsFile: result.files.bank_creds,
    operatorCredsFile: result.files.operator_creds,
    bankLogin: { credsFile: result.files.bank_creds, tls: { caFile } },
    operatorLogin: { credsFile: result.files.operator_creds, tls: { caFile } },
    server,
    async stop() {
      const keepAlive = setInterval(() => {}, 60_000)
      try {
        await server.stop()
      } finally {
        clearInterval(keepAlive)
      }
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}
