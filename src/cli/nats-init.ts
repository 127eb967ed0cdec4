import path from 'node:path'
import { UsageError } from './cli-context.ts'
import type { Database } from '../schema.ts'
import type { LocalCommand } from './local-command.ts'
import { refuseStoreInUse, withoutPassword } from './operator-create.ts'

// `bank nats init`: makes the bank the NATS authority of its partners (src/nats-identity)
// and writes the NATS server's configuration, TLS files and the credentials files of the
// bank, a first operator and the card network. Like `bank operator create` it runs where
// the database is (the keys are kept there, sealed with BANK_SECRETS_KEY), never over NATS:
// no server runs the bank's configuration before this.

export const natsInitCommand: LocalCommand = {
  words: 'nats init',
  usage: 'nats init --dir DIR [--listen HOST:PORT] [--names N1,N2] [--jetstream-disk BYTES] ' +
    '[--jetstream-memory BYTES]',
  summary:
    "Make the bank the NATS authority of its partners and write the NATS server's configuration, " +
      "its TLS certificate (from a CA it makes), the bank's credentials (bank.creds), a first " +
      "operator's (operator.creds) and the card network's (card-network.creds) into DIR.",
  positionals: [],
  flags: [
    { word: 'dir', example: 'DIR', required: true,
      help: 'where to write the files (made if missing; mode 0700)' },
    { word: 'listen', example: 'HOST:PORT', required: false,
      help: 'where the NATS server listens; default 127.0.0.1:4222' },
    { word: 'names', example: 'N1,N2', required: false,
      help: "the server certificate's DNS names and IP addresses; default localhost,127.0.0.1" },
    { word: 'jetstream-disk', example: 'BYTES', required: false,
      help: "each server's JetStream file storage (max_file_store); default half the disk " +
        'space free in DIR' },
    { word: 'jetstream-memory', example: 'BYTES', required: false,
      help: "each server's JetStream memory storage (max_memory_store); default a quarter of " +
        "this machine's memory" },
  ],
  notes:
    'Runs on this machine against the database itself (DATABASE_URL, else the PGlite store in ' +
      'BANK_DATA_DIR), with the ' +
    "bank's secrets key (BANK_SECRETS_KEY, else <data dir>/secrets-key). Run it once per " +
      "deployment; run again, it keeps " +
    'the keys and writes the files afresh (a new bank.creds; TLS files, operator.creds and ' +
    'card-network.creds only where missing; an authority set up before the card network had ' +
    'an account gets one). Then: nats-server -c DIR/nats-server.conf on every server, and each bank instance with NATS_URL=tls://HOST:PORT ' +
    'NATS_CREDS=DIR/bank.creds NATS_TLS_CA=DIR/ca.pem; the CLI with ' +
      'NATS_CREDS=DIR/operator.creds NATS_TLS_CA=DIR/ca.pem.',
  run: async (args, env) => {
    const dir = typeof args.flags.dir === 'string' && args.flags.dir !== '' ? args.flags.dir
      : undefined
    if (!dir) throw new UsageError(
      '--dir is required: where to write the NATS configuration and credentials files')
    const listen = typeof args.flags.listen === 'string' && args.flags.listen !== ''
      ? args.flags.listen : '127.0.0.1:4222'
    if (!/^[^\s:]+:\d{1,5}$/.test(listen)) throw new UsageError('--listen takes HOST:PORT, e.g. 0.0.0.0:4222')
    const names = typeof args.flags.names === 'string' && args.flags.names !== ''
      ? args.flags.names.split(',').map((n) => n.trim()).filter(Boolean)
      : ['localhost', '127.0.0.1']
    if (names.some((name) => !/^[A-Za-z0-9.:*-]+$/.test(name))) throw new UsageError('--names takes DNS names and IP addresses, comma-separated')
    const jetstreamDisk = bytesFlag(args.flags['jetstream-disk'], 'jetstream-disk')
    const jetstreamMemory = bytesFlag(args.flags['jetstream-memory'], 'jetstream-memory')
    const { loadConfig } = await import('../config.ts')
    const { openDatabase, pgliteDirFor } = await import('../db/database.ts')
    const { migrations } = await import('../modules.ts')
    const { SecretBox } = await import('../secrets/secret-box.ts')
    const { systemClock } = await import('../clock.ts')
    const { initNatsDeployment } = await import('../nats-identity/nats-init.ts')
    // It opens the store only: production's rail settings are the instances' (src/config.ts).
    const config = loadConfig(env, { railRequired: false })
    const pgliteDir = pgliteDirFor(config.dataDir)
    if (!config.databaseUrl) refuseStoreInUse(pgliteDir)
    const database = await openDatabase<Database>({ databaseUrl: config.databaseUrl, pgliteDir,
      poolMax: 1, migrations })
    try {
      const box = new SecretBox({ key: config.secretsKey, dataDir: config.dataDir })
      const result = await initNatsDeployment({ db: database.db, box, clock: systemClock,
        dir: path.resolve(dir), listen, serverNames: names, jetstreamDisk, jetstreamMemory })
      return {
        result: {
          ...result,
          database: config.databaseUrl ? withoutPassword(config.databaseUrl) : pgliteDir,
          next: [
            `nats-server -c ${result.files.config}`,
            `NATS_URL=tls://${listen.replace(/^0\.0\.0\.0:/, `${names[0]}:`)} NATS_CREDS=${result.files.bank_creds} NATS_TLS_CA=${result.files.ca} npm start`,
          ],
        },
      }
    } finally {
      await database.close()
    }
  },
}

/** A flag's whole number of bytes, if given. */
function bytesFlag(value: string | boolean | undefined, name: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'string' || !/^\d{1,16}$/.test(value) || Number(value) < 1024 * 1024) {
    throw new UsageError(`--${name} takes a whole number of bytes, at least 1048576 (1 MiB)`)
  }
  return Number(value)
}
