import path from 'node:path'
import { defaultNatsUrl, run, type LocalNats } from '../src/bank-process.ts'
import type { Config } from '../src/config.ts'
import type { Logger } from '../src/logger.ts'
import { natsConnectOptions } from '../src/nats/nats-connect.ts'
import { canConnect, findNatsServerBinary, natsMissingMessage, startNatsServer } from './nats-server.ts'

// `npm start` on a developer's machine (scripts/start.mjs imports this): the bank that
// src/main.ts runs (src/bank-process.ts), plus what a machine with nothing set up needs. With
// NATS_URL unset it uses the server at the default address when one answers, else starts a private
// nats-server (its store in <data dir>/nats), stopped with the bank. A deployment runs src/main.ts
// itself and names its server.

async function localNats(config: Config, log: Logger): Promise<LocalNats | undefined> {
  if (await canConnect(defaultNatsUrl, 1000, natsConnectOptions(config.natsAuth))) return undefined
  const binary = findNatsServerBinary()
  if (!binary) {
    process.stderr.write(`${natsMissingMessage}\n`)
    process.exit(2)
  }
  const server = await startNatsServer({ binary, storeDir: path.join(config.dataDir, 'nats') })
  log.info({ nats: server.url, binary },
    'no NATS server at the default address; started a private one')
  return server
}

run({ localNats })
