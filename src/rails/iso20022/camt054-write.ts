import type { Writable } from 'node:stream'
import { checkEntry, writeAccount, writeEntry, type AccountEntryRow } from './camt053-write.ts'
import { checkText, isoDateTime } from './xml-text.ts'
import { chunk_chars_target, messageText, writeMessage, XmlWriter } from './xml-write.ts'

// An intraday notification of the bank's settlement account (camt.054.001.08,
// BkToCstmrDbtCdtNtfctn; docs/operators/rails.md): the entries booked since the last
// one, as the statement's entries (camt053-write.ts) without its balances. The bank reads
// these (camt-read.ts); it writes them only in its clearing-house simulator.

export const camt054_namespace = 'urn:iso:std:iso:20022:tech:xsd:camt.054.001.08'

export interface Camt054Header {
  /** The message's id (MsgId, Max35Text). */
  message_id: string
  /** When it was made (GrpHdr/CreDtTm and Ntfctn/CreDtTm), written in UTC. */
  created_at: Date
  /** The notification's id (Ntfctn/Id, Max35Text). */
  notification_id: string
  /** The settlement account (Acct/Id/Othr/Id, Max34Text), in ZAR. */
  account_id: string
}

/** The notification in chunks; throws IsoValueError for a value the schema cannot hold. */
export async function* camt054Chunks(
  header: Camt054Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): AsyncGenerator<string, void, undefined> {
  checkText(header.message_id, 'Max35Text', 'GrpHdr/MsgId')
  checkText(header.notification_id, 'Max35Text', 'Ntfctn/Id')
  checkText(header.account_id, 'Max34Text', 'Ntfctn/Acct/Id/Othr/Id')
  const createdAt = isoDateTime(header.created_at, 'GrpHdr/CreDtTm')
  const xml = new XmlWriter(camt054_namespace, 'BkToCstmrDbtCdtNtfctn')
  xml.open('GrpHdr').text('MsgId', header.message_id).text('CreDtTm', createdAt).close()
  xml.open('Ntfctn').text('Id', header.notification_id).text('CreDtTm', createdAt)
  writeAccount(xml, header.account_id)
  for await (const entry of entries) {
    writeEntry(xml, checkEntry(entry))
    const chunk = xml.take(chunk_chars_target)
    if (chunk !== undefined) yield chunk
  }
  xml.end()
  const last = xml.take(0)
  if (last !== undefined) yield last
}

/** The notification, whole. */
export function camt054Text(
  header: Camt054Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): Promise<string> {
  return messageText(camt054Chunks(header, entries))
}

/** Writes the notification into a Writable and ends it; see camt054Chunks. */
export async function writeCamt054(
  sink: Writable,
  header: Camt054Header,
  entries: AsyncIterable<AccountEntryRow> | Iterable<AccountEntryRow>,
): Promise<void> {
  await writeMessage(sink, camt054Chunks(header, entries))
}
