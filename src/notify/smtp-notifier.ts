import type { Kysely } from 'kysely'
import nodemailer, { type Transporter } from 'nodemailer'
import type { Clock } from '../clock.ts'
import type { Database } from '../schema.ts'
import { assert } from '../errors.ts'
import { notifier_limits, type Notifier, type NotifierMessage } from './notifier.ts'

// The notifier that sends e-mail through an SMTP server (nodemailer), configured by one
// URL: `smtp://user:password@mail.example.com:587` (STARTTLS when the server offers it) or
// `smtps://…:465` (TLS from the start). A key is sent once: the keys sent are recorded
// (with the recipient and subject, never the text, which may carry a one-time PIN) and a
// second send under a sent key does nothing. The record is written after the server
// accepted the message, so a crash in between can send a message twice, never lose one.
// A server that refuses the message or cannot be reached makes send() reject; callers
// decide what that means (an OTP that cannot go out ends its batch; a payment advice job
// is retried).

export interface SmtpNotifierOptions {
  /** `smtp://` or `smtps://`, with user and password in the URL when the server needs them. */
  url: string
  /** The sender's address. */
  from: string
  /** Connecting, the greeting and each reply, each at most this long. */
  timeout_ms: number
}

export class SmtpNotifier implements Notifier {
  private readonly transport: Transporter

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly options: SmtpNotifierOptions,
  ) {
    this.transport = nodemailer.createTransport(transportOptions(options))
  }

  async send(message: NotifierMessage): Promise<void> {
    assert(message.key.length > 0 && message.key.length <= notifier_limits.key_length_max,
      'a notifier key is 1-200 characters')
    assert(message.subject.length <= notifier_limits.subject_length_max,
      'a notifier subject is at most 200 characters')
    assert(message.text.length <= notifier_limits.text_length_max,
      'a notifier text is at most 10000 characters')
    const sent = await this.db.selectFrom('notifier_sent').select('key').where('key', '=',
      message.key).executeTakeFirst()
    if (sent) return
    await this.transport.sendMail({ from: this.options.from, to: message.to,
      subject: message.subject, text: message.text })
    await this.db
      .insertInto('notifier_sent')
      .values({ key: message.key, recipient: message.to, subject: message.subject,
        sent_at: this.clock.now() })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute()
  }
}

/** The URL's parts as nodemailer options (a bad URL is caught by the configuration first). */
function transportOptions(options: SmtpNotifierOptions) {
  const url = new URL(options.url)
  const secure = url.protocol === 'smtps:'
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    ...(url.username ? { auth: { user: decodeURIComponent(url.username),
      pass: decodeURIComponent(url.password) } } : {}),
    connectionTimeout: options.timeout_ms,
    greetingTimeout: options.timeout_ms,
    socketTimeout: options.timeout_ms,
    // Never log: messages carry one-time PINs.
    logger: false,
    debug: false,
  }
}

/** Why an SMTP URL setting is not usable, or undefined when it is. */
export function smtpUrlProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'is not a URL'
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') return 'must start with smtp:// or smtps://'
  if (!url.hostname) return 'needs a host'
  return undefined
}
