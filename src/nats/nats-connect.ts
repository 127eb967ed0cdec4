import fs from 'node:fs'
import {
  credsAuthenticator,
  nkeyAuthenticator,
  type ConnectionOptions,
} from '@nats-io/transport-node'

// How the bank (and its CLI and SDK helpers) log in to a NATS server that requires it:
// a credentials file (NATS_CREDS, a JWT with its nkey seed, as `nsc` writes it), an nkey
// seed file (NATS_NKEY), a user and password (NATS_USER, NATS_PASSWORD) or a token
// (NATS_TOKEN); and TLS with a private CA or a client certificate (NATS_TLS_CA,
// NATS_TLS_CERT, NATS_TLS_KEY; a `tls://` URL turns TLS on by itself). Files are read when a
// connection is made, so a rotated credentials file is picked up on the next reconnect.

export interface NatsAuth {
  credsFile?: string | undefined
  nkeySeedFile?: string | undefined
  user?: string | undefined
  password?: string | undefined
  token?: string | undefined
  tls?:
    | { caFile?: string | undefined; certFile?: string | undefined; keyFile?: string | undefined }
    | undefined
}

/**
 * The NATS servers a URL setting names: one URL, or several separated by commas (the servers
 * of one cluster, as `NATS_URL=nats://a:4222,nats://b:4222` gives them). A client connects to
 * whichever of them answers, so it can start while one is down; once connected it also learns
 * the cluster's other servers from the one it reached.
 */
export function natsServerList(servers: string | string[]): string[] {
  const listed = Array.isArray(servers) ? servers : [servers]
  return listed
    .flatMap((entry) => entry.split(','))
    .map((url) => url.trim())
    .filter((url) => url !== '')
}

/** The settings as the environment gives them (the bank's config reads the same names). */
export function natsAuthFromEnv(env: NodeJS.ProcessEnv = process.env): NatsAuth {
  const set = (name: string) => (env[name] ? env[name] : undefined)
  const tls = {
    caFile: set('NATS_TLS_CA'),
    certFile: set('NATS_TLS_CERT'),
    keyFile: set('NATS_TLS_KEY'),
  }
  return {
    credsFile: set('NATS_CREDS'),
    nkeySeedFile: set('NATS_NKEY'),
    user: set('NATS_USER'),
    password: set('NATS_PASSWORD'),
    token: set('NATS_TOKEN'),
    tls: tls.caFile || tls.certFile || tls.keyFile ? tls : undefined,
  }
}

/** Problems with the settings themselves (files missing, half a pair), for start-up to refuse. */
export function natsAuthProblems(auth: NatsAuth): string[] {
  const problems: string[] = []
  const file = (name: string, value: string | undefined) => {
    if (value && !fs.existsSync(value)) problems.push(`${name}=${value}: no such file`)
  }
  file('NATS_CREDS', auth.credsFile)
  file('NATS_NKEY', auth.nkeySeedFile)
  file('NATS_TLS_CA', auth.tls?.caFile)
  file('NATS_TLS_CERT', auth.tls?.certFile)
  file('NATS_TLS_KEY', auth.tls?.keyFile)
  const ways = [auth.credsFile, auth.nkeySeedFile, auth.user ?? auth.password, auth.token].filter(
    Boolean,
  ).length
  if (ways > 1)
    problems.push(
      'set one of NATS_CREDS, NATS_NKEY, NATS_USER/NATS_PASSWORD or NATS_TOKEN, not several',
    )
  if (auth.password && !auth.user) problems.push('NATS_PASSWORD is set without NATS_USER')
  if (Boolean(auth.tls?.certFile) !== Boolean(auth.tls?.keyFile))
    problems.push('NATS_TLS_CERT and NATS_TLS_KEY go together (a client certificate and its key)')
  return problems
}

/** The connection options the settings ask for (none when NATS needs no login). */
export function natsConnectOptions(auth: NatsAuth): Partial<ConnectionOptions> {
  const options: Partial<ConnectionOptions> = {}
  if (auth.credsFile) {
    const file = auth.credsFile
    options.authenticator = credsAuthenticator(() => fs.readFileSync(file))
  } else if (auth.nkeySeedFile) {
    const file = auth.nkeySeedFile
    options.authenticator = nkeyAuthenticator(() =>
      new TextEncoder().encode(fs.readFileSync(file, 'utf8').trim()),
    )
  } else if (auth.user) {
    options.user = auth.user
    if (auth.password !== undefined) options.pass = auth.password
  } else if (auth.token) {
    options.token = auth.token
  }
  if (auth.tls) {
    options.tls = {
      ...(auth.tls.caFile ? { caFile: auth.tls.caFile } : {}),
      ...(auth.tls.certFile ? { certFile: auth.tls.certFile } : {}),
      ...(auth.tls.keyFile ? { keyFile: auth.tls.keyFile } : {}),
    }
  }
  return options
}
