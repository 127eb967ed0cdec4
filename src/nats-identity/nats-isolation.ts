import fs from 'node:fs'
import { connect, type ConnectionOptions } from '@nats-io/transport-node'
import type { Config } from '../config.ts'
import { natsServerList } from '../nats/nats-connect.ts'
import type { NatsIdentity } from './nats-identity.ts'
import { credsAccount } from './nats-init.ts'

// What the bank checks of its NATS connection before it serves (the transport isolation of
// docs/operations.md, "Partners on NATS"): in production, partners must
// not be able to share what the bank receives. That needs the bank to be the NATS authority
// (`bank nats init`), to connect as its own account, and a server that admits nobody
// without credentials. A sandbox on an open server runs, and says so at start.

export const open_nats_warning =
  'NATS is open: any client of this server can read, answer and replay every partner\'s ' +
  'requests. Fine for a sandbox on your own machine; a bank with partners runs `npx bank nats ' +
    'init` (docs/operations.md, "Partners on NATS")'

/** Why the bank must not start on this connection, or undefined when it may. */
export async function natsIsolationProblem(input: {
  config: Config
  identity: NatsIdentity | undefined
  servers: string
  tls: Partial<ConnectionOptions>
  /**
   * Tests of production rules that have nothing to do with NATS run on an open server; main.ts
   * never sets it.
   */
  allowOpen: boolean
}): Promise<string | undefined> {
  const { config, identity } = input
  if (!identity) {
    if (config.sandbox || input.allowOpen) return undefined
    return (
      'production (BANK_SANDBOX=false) refuses to start on a NATS server that partners could ' +
      'share: the bank is not yet the NATS authority of its partners. Run `npx bank nats init ' +
      '--dir <dir>` once (with this DATABASE_URL and BANK_SECRETS_KEY), start nats-server with ' +
      'the configuration it writes, and start the bank with NATS_CREDS=<dir>/bank.creds ' +
        'NATS_TLS_CA=<dir>/ca.pem (docs/operations.md, "Partners on NATS")'
    )
  }
  const credsFile = config.natsAuth.credsFile
  const account = credsFile ? credsAccount(fs.readFileSync(credsFile, 'utf8')) : undefined
  if (account !== identity.bankAccount) {
    return (
      `this bank is the NATS authority of its partners, so it connects as its own NATS account ` +
        `(${identity.bankAccount}); ` +
      (credsFile ? `NATS_CREDS=${credsFile} is a user of ${account ?? 'no account'}. `
        : 'NATS_CREDS is not set. ') +
      'Set NATS_CREDS to the bank.creds that `npx bank nats init` wrote (run it again to write a ' +
        'new one)'
    )
  }
  if (config.sandbox || input.allowOpen) return undefined
  // A server that lets a client in without credentials (an open port, a no_auth_user) puts
  // that client somewhere partners' or the bank's messages may be.
  try {
    const anonymous = await connect({ servers: natsServerList(input.servers), reconnect: false,
      timeout: 5_000, ...input.tls })
    await anonymous.close()
    return `the NATS server at ${input.servers} admits clients without credentials; production ` +
      `refuses it. Run it with the configuration \`npx bank nats init\` wrote`
  } catch {
    return undefined
  }
}
