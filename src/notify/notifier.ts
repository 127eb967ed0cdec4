// The bank's way of telling a person something (payment advices now; one-time passwords
// and the like later). A provider behind an interface: the sandbox and the tests use the
// simulated notifier, which keeps what it would have sent; a real mail sender comes later.

export interface NotifierMessage {
  /**
   * Names the message for ever: sending the same key again sends nothing. Callers that may
   * run twice (a job retried after a crash) send under one key, so a person gets one message.
   */
  key: string
  /** The recipient's e-mail address. */
  to: string
  subject: string
  /** Plain text. */
  text: string
}

export interface Notifier {
  /** Resolves once the message is sent, or was sent before under the same key. */
  send(message: NotifierMessage): Promise<void>
}

/** Limits every notifier keeps, whatever carries the message. */
export const notifier_limits = {
  key_length_max: 200,
  subject_length_max: 200,
  text_length_max: 10_000,
}
