import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import type { NatsConnection } from '@nats-io/transport-node'
import type { console_sign_out_reasons } from '../audit/audit-contract.ts'
import { OperatorClient } from '../client/operator-client.ts'

// The console's sessions: held in this process's memory only, each with its own
// OperatorClient (the operator's own credential, on the console's NATS connection), so that
// every request the console makes is that operator's, checked and audited by the bank as the
// CLI's are. The browser holds only the session's random id; the credential never leaves
// the server after sign-in. A session ends when signed out, when idle too long, at its
// absolute limit, or when the bank refuses its credential (revoked).
//
// Signing in and out are in the bank's audit trail under the operator's credential: the
// sign-in is `ops.console.sign_in`, whose answer is also the proof that the credential is an
// operator's, and a session that ends calls `ops.console.sign_out` with why (signed out,
// expired, replaced at the limit of sessions, or the console stopping) before its client
// closes. A session whose credential was revoked ends without one: the bank refuses it.

export type SignOutReason = (typeof console_sign_out_reasons)[number]

export interface ConsoleSession {
  id: string
  /** The id the audit trail pairs its sign-in and sign-out by (never the cookie's id). */
  auditId: string
  /** The token every form carries and every POST is checked against. */
  csrf: string
  client: OperatorClient
  /** The operator as the bank knows them (its answer to the sign-in): credential id and label. */
  operator: SessionOperator
  /** Whether the bank is a sandbox (it answered `ops.sandbox.clock` at sign-in): the banner. */
  sandbox: boolean
  createdAt: number
  seenAt: number
}

export interface SessionOperator {
  credentialId: string
  name: string
}

export interface SessionLimits {
  /** A session unused this long ends (default 30 minutes). */
  idleMs: number
  /** A session ends this long after sign-in, however used (default 8 hours). */
  maxMs: number
  /** Sessions held at once; signing in past this ends the oldest (default 1000). */
  countMax: number
}

export const session_limits_default: SessionLimits = {
  idleMs: 30 * 60_000,
  maxMs: 8 * 3_600_000,
  countMax: 1000,
}

/** A random id or token: 32 bytes, base64url. */
export const randomToken = (): string => randomBytes(32).toString('base64url')

/** Compares two secrets in constant time; a missing one never matches. */
export function sameSecret(a: string | undefined | null, b: string | undefined | null): boolean {
  if (!a || !b) return false
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

export class ConsoleSessions {
  private readonly sessions = new Map<string, ConsoleSession>()

  constructor(
    private readonly connection: NatsConnection,
    private readonly limits: SessionLimits = session_limits_default,
    private readonly timeoutMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Signs in with an operator credential: the bank must answer an `ops.` read with it (a
   * partner's credential is refused there, 403; an unknown one 401, thrown as BankApiError).
   */
  async signIn(token: string, address?: string): Promise<ConsoleSession> {
    const client = new OperatorClient({
      connection: this.connection,
      token,
      timeoutMs: this.timeoutMs,
    })
    const auditId = randomUUID()
    let operator: SessionOperator
    try {
      const known = await client.console.signIn({ session_id: auditId,
        ...(address ? { address } : {}) })
      operator = { credentialId: known.credential_id, name: known.name }
    } catch (error) {
      await client.close()
      throw error
    }
    this.sweep()
    if (this.sessions.size >= this.limits.countMax) {
      const oldest = this.sessions.keys().next().value
      if (oldest !== undefined) await this.end(oldest, 'replaced')
    }
    // A production bank refuses every sandbox subject (403): a bank's mode is fixed at start.
    const sandbox = await client.sandbox.clock({}).then(() => true, () => false)
    const at = this.now()
    const [id, csrf] = [randomToken(), randomToken()]
    const session = { id, auditId, csrf, client, operator, sandbox, createdAt: at, seenAt: at }
    this.sessions.set(session.id, session)
    return session
  }

  /** The live session with this id, its idle clock restarted; none for an unknown or expired id. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined
    const session = this.sessions.get(id)
    if (!session) return undefined
    if (this.expired(session)) {
      void this.end(id, 'expired')
      return undefined
    }
    session.seenAt = this.now()
    return session
  }

  /**
   * Ends a session; with a reason, the bank records its sign-out first (a failure to record
   * it does not keep the session alive). Without one (a revoked credential) nothing is sent.
   */
  async end(id: string, reason?: SignOutReason): Promise<void> {
    const session = this.sessions.get(id)
    if (!session) return
    this.sessions.delete(id)
    if (reason) {
      await session.client.console.signOut({ session_id: session.auditId, reason }).catch(() => {})
    }
    await session.client.close().catch(() => {})
  }

  /** The console stops: every session ends, each sign-out recorded while the bank answers. */
  async endAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.end(id, 'console_stopped')))
  }

  get size(): number {
    return this.sessions.size
  }

  private expired(session: ConsoleSession): boolean {
    const at = this.now()
    return at - session.seenAt > this.limits.idleMs || at - session.createdAt > this.limits.maxMs
  }

  private sweep(): void {
    for (const session of this.sessions.values()) {
      if (this.expired(session)) void this.end(session.id, 'expired')
    }
  }
}
