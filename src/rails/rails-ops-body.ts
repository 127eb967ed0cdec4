import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import path from 'node:path'
import type { Kysely } from 'kysely'
import type { z } from 'zod'
import type { Database } from '../schema.ts'
import { IsoValueError } from './iso20022/iso-value-error.ts'
import { pacs008_message_name } from './iso20022/pacs008-write.ts'
import { recordedPacs008 } from './iso-rail.ts'
import type { RailFolder } from './rail-folder.ts'
import { message_body_chars_max, type railMessageBody } from './rails-ops-contract.ts'
import type { MessageRow } from './rails-ops-store.ts'

// A rail message's XML for an operator (`ops.rails.message` with include_body), at most
// message_body_chars_max characters. The bank keeps the text of the small messages it sends
// (a pacs.004 of credits it sends back); a pacs.008 it made again from its record, exactly as
// iso-rail.ts writes its file again after a crash (the same bytes), stopping once the bound is
// passed. An inbound message is not kept in the database: its applied file is read from the
// rail folder's archive/, and shown only if its SHA-256 is the one recorded when it was
// applied (an operator must not be shown another file under the name).

type Body = z.output<typeof railMessageBody>

export async function messageBody(db: Kysely<Database>, folder: RailFolder, branchCode: string,
    row: MessageRow): Promise<Body> {
  if (row.direction === 'in') return archivedBody(folder, row)
  if (row.body !== null) return bounded(row.body, 'record')
  if (row.kind !== pacs008_message_name) return none('the bank keeps no copy of this message')
  try {
    return await rebuiltPacs008(db, branchCode, row)
  } catch (error) {
    if (error instanceof IsoValueError) {
      return none(`the record cannot be written: ${error.message}`)
    }
    throw error
  }
}

function none(note: string): Body {
  return { xml: null, truncated: false, source: null, note }
}

function bounded(text: string, source: 'record' | 'archive'): Body {
  const truncated = text.length > message_body_chars_max
  return { xml: truncated ? text.slice(0, message_body_chars_max) : text, truncated, source,
    note: null }
}

/** A pacs.008 the bank sent, written again from its record until the bound is passed. */
async function rebuiltPacs008(db: Kysely<Database>, branchCode: string,
    row: MessageRow): Promise<Body> {
  let text = ''
  for await (const chunk of recordedPacs008(db, branchCode, row)) {
    text += chunk
    // One character past the bound says it was cut; the rest is never made.
    if (text.length > message_body_chars_max) break
  }
  return bounded(text, 'record')
}

/** An applied file in archive/, if it is still there and is the file applied. */
async function archivedBody(folder: RailFolder, row: MessageRow): Promise<Body> {
  if (path.basename(row.file_name) !== row.file_name) return none('not a rail file name')
  const file = path.join(folder.archive, row.file_name)
  const hash = createHash('sha256')
  const kept: Buffer[] = []
  // Bytes enough for the bound in any UTF-8 (at most four bytes a character).
  let keptBytes = 0
  try {
    for await (const chunk of createReadStream(file)) {
      const bytes = chunk as Buffer
      hash.update(bytes)
      if (keptBytes <= message_body_chars_max * 4) {
        kept.push(bytes)
        keptBytes += bytes.length
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return none(`${row.file_name} is no longer in the rail folder's archive/`)
    }
    throw error
  }
  if (row.sha256 !== null && hash.digest('hex') !== row.sha256) {
    return none(`archive/${row.file_name} is not the file applied (its SHA-256 differs)`)
  }
  return bounded(new TextDecoder().decode(Buffer.concat(kept)), 'archive')
}
