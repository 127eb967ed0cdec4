import { SaxesParser, type SaxesTagPlain } from 'saxes'
import type { DateOfBirth, EntryDocument, EntryKind, ListEntry, ListSource } from './list-entry.ts'

// The two lists' published XML formats, read as a stream (saxes, as the ISO 20022 readers
// do): the file is written in pieces and each entry is handed on as soon as it closes, so
// only one entry's elements are ever held.
//
// - The UN Security Council's consolidated list: <CONSOLIDATED_LIST dateGenerated="…"> with
//   <INDIVIDUALS><INDIVIDUAL> (FIRST_NAME … FOURTH_NAME, NAME_ORIGINAL_SCRIPT, UN_LIST_TYPE,
//   REFERENCE_NUMBER, INDIVIDUAL_ALIAS/ALIAS_NAME, INDIVIDUAL_DATE_OF_BIRTH with TYPE_OF_DATE
//   and DATE, YEAR or FROM_YEAR/TO_YEAR, INDIVIDUAL_DOCUMENT with TYPE_OF_DOCUMENT, NUMBER,
//   ISSUING_COUNTRY) and <ENTITIES><ENTITY> (FIRST_NAME, ENTITY_ALIAS/ALIAS_NAME).
// - OFAC's SDN list: <sdnList> with <publshInformation><Publish_Date>MM/DD/YYYY and
//   <sdnEntry> (uid, firstName, lastName, sdnType, programList/program, akaList/aka,
//   dateOfBirthList/dateOfBirthItem/dateOfBirth as "10 Feb 1951", "Feb 1951", "1951",
//   "circa 1951" or "1956 to 1958", idList/id with idType, idNumber, idCountry).
// Names in no namespace or OFAC's default one are read by their local names. A DOCTYPE is
// refused (no entity is ever expanded).

/** The most entries one list may hold (OFAC's SDN list has about 18,000, the UN's 1,000). */
export const list_entries_max = 100_000
/** The most names (the name and its aliases) kept per entry. */
const names_per_entry_max = 200
/** The most elements one entry may have (a bound on what one entry holds in memory). */
const entry_elements_max = 5_000

export class ListRefused extends Error {}

export interface ListHeader {
  source: ListSource
  /** The list's own date: UN `dateGenerated` as written, OFAC's Publish_Date as YYYY-MM-DD. */
  list_date: string | null
}

interface XmlElement {
  name: string
  text: string
  children: XmlElement[]
}

const records: Record<ListSource, ReadonlySet<string>> = {
  un_consolidated: new Set(['INDIVIDUAL', 'ENTITY']),
  ofac_sdn: new Set(['sdnEntry']),
}

/**
 * A list reader: `write` each piece of the file's text, then `end`; `onEntry` is handed each
 * entry as it closes. Throws ListRefused for a file that is not one of the two lists.
 */
export class SanctionsListReader {
  private readonly parser = new SaxesParser({ xmlns: false })
  private readonly open: XmlElement[] = []
  private header: ListHeader | undefined
  private entries = 0
  private recordDepth = -1
  private recordElements = 0
  private publishDate: string | null = null

  constructor(private readonly onEntry: (entry: ListEntry) => void) {
    const parser = this.parser
    parser.on('doctype', () => { throw new ListRefused('a DOCTYPE is not allowed') })
    parser.on('error', (error) => {
      throw new ListRefused(`not well-formed XML: ${error.message.split('\n')[0]}`)
    })
    parser.on('opentag', (tag) => this.opened(tag))
    parser.on('text', (text) => this.text(text))
    parser.on('cdata', (text) => this.text(text))
    parser.on('closetag', () => this.closed())
  }

  write(text: string): void {
    this.parser.write(text)
  }

  /** The end of the file: the list's source and date. */
  end(): ListHeader & { entries: number } {
    this.parser.close()
    if (!this.header) throw new ListRefused('the file has no root element')
    const list_date = this.header.source === 'ofac_sdn' ? this.publishDate : this.header.list_date
    return { ...this.header, list_date, entries: this.entries }
  }

  private opened(tag: SaxesTagPlain): void {
    const name = localName(tag.name)
    if (!this.header) {
      this.header = rootHeader(name, tag.attributes)
      return
    }
    const element: XmlElement = { name, text: '', children: [] }
    if (this.recordDepth >= 0) {
      if (++this.recordElements > entry_elements_max) throw new ListRefused(
        `an entry has more than ${entry_elements_max} elements`)
      this.open.at(-1)!.children.push(element)
    } else if (records[this.header.source].has(name)) {
      this.recordDepth = this.open.length
      this.recordElements = 0
    }
    this.open.push(element)
  }

  private text(text: string): void {
    const element = this.open.at(-1)
    if (element && (this.recordDepth >= 0 || element.name === 'Publish_Date')) {
      element.text += text
    }
  }

  private closed(): void {
    const element = this.open.pop()
    if (!element) return
    if (element.name === 'Publish_Date' && this.recordDepth < 0) {
      this.publishDate = ofacPublishDate(element.text.trim())
    }
    if (this.open.length !== this.recordDepth) return
    this.recordDepth = -1
    if (++this.entries > list_entries_max) throw new ListRefused(
      `the list has more than ${list_entries_max} entries`)
    const entry = this.header!.source === 'ofac_sdn' ? ofacEntry(element) : unEntry(element)
    this.onEntry(entry)
  }
}

function localName(name: string): string {
  const colon = name.indexOf(':')
  return colon < 0 ? name : name.slice(colon + 1)
}

function rootHeader(name: string, attributes: Record<string, string>): ListHeader {
  if (name === 'CONSOLIDATED_LIST') {
    return { source: 'un_consolidated', list_date: attributes.dateGenerated?.trim() || null }
  }
  if (name === 'sdnList') return { source: 'ofac_sdn', list_date: null }
  throw new ListRefused(`the root element <${name}> is neither the UN's CONSOLIDATED_LIST ` +
    "nor OFAC's sdnList")
}

/** OFAC's MM/DD/YYYY as YYYY-MM-DD; anything else as written. */
function ofacPublishDate(text: string): string | null {
  const parts = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(text)
  return parts ? `${parts[3]}-${parts[1]}-${parts[2]}` : text || null
}

function child(element: XmlElement, name: string): string {
  return element.children.find((c) => c.name === name)?.text.trim() ?? ''
}

function childrenNamed(element: XmlElement, name: string): XmlElement[] {
  return element.children.filter((c) => c.name === name)
}

function spaced(...parts: string[]): string {
  return parts.map((p) => p.trim()).filter((p) => p !== '').join(' ')
}

function distinctNames(names: string[]): string[] {
  return [...new Set(names.map((n) => n.replace(/\s+/g, ' ').trim()).filter((n) => n !== ''))]
    .slice(0, names_per_entry_max)
}

function unEntry(element: XmlElement): ListEntry {
  const individual = element.name === 'INDIVIDUAL'
  const primary = spaced(child(element, 'FIRST_NAME'), child(element, 'SECOND_NAME'),
    child(element, 'THIRD_NAME'), child(element, 'FOURTH_NAME'))
  const aliases = childrenNamed(element, individual ? 'INDIVIDUAL_ALIAS' : 'ENTITY_ALIAS')
    .map((a) => child(a, 'ALIAS_NAME'))
  const names = distinctNames([primary, child(element, 'NAME_ORIGINAL_SCRIPT'), ...aliases])
  const documents: EntryDocument[] = childrenNamed(element, 'INDIVIDUAL_DOCUMENT')
    .map((d) => ({ type: child(d, 'TYPE_OF_DOCUMENT'), number: child(d, 'NUMBER'),
      country: child(d, 'ISSUING_COUNTRY') || child(d, 'COUNTRY_OF_ISSUE') || null }))
    .filter((d) => d.number !== '')
  const dates = childrenNamed(element, 'INDIVIDUAL_DATE_OF_BIRTH').flatMap(unDateOfBirth)
  const listType = child(element, 'UN_LIST_TYPE')
  return {
    list_ref: child(element, 'REFERENCE_NUMBER') || child(element, 'DATAID'),
    kind: individual ? 'individual' : 'entity',
    names, dates_of_birth: dates, documents, programs: listType ? [listType] : [],
  }
}

function unDateOfBirth(element: XmlElement): DateOfBirth[] {
  const date = /^(\d{4})-\d{2}-\d{2}/.exec(child(element, 'DATE'))
  if (date) return [{ date: date[0], year_from: Number(date[1]), year_to: Number(date[1]) }]
  const year = Number(child(element, 'YEAR'))
  if (year > 0) return [{ date: null, year_from: year, year_to: year }]
  const from = Number(child(element, 'FROM_YEAR'))
  const to = Number(child(element, 'TO_YEAR'))
  return from > 0 && to >= from ? [{ date: null, year_from: from, year_to: to }] : []
}

const ofac_kinds: Record<string, EntryKind> = {
  individual: 'individual', entity: 'entity', vessel: 'vessel', aircraft: 'aircraft',
}

/** OFAC id types that are not identity documents (its idList carries them too). */
const not_documents = /gender|website|email|phone|sanctions|organization|vessel|aircraft/i

function ofacEntry(element: XmlElement): ListEntry {
  const kind = ofac_kinds[child(element, 'sdnType').toLowerCase()] ?? 'entity'
  const aka = (list: string, item: string) => childrenNamed(element, list)
    .flatMap((l) => childrenNamed(l, item))
  const names = distinctNames([
    spaced(child(element, 'firstName'), child(element, 'lastName')),
    ...aka('akaList', 'aka').map((a) => spaced(child(a, 'firstName'), child(a, 'lastName'))),
  ])
  const documents: EntryDocument[] = aka('idList', 'id')
    .map((d) => ({ type: child(d, 'idType'), number: child(d, 'idNumber'),
      country: child(d, 'idCountry') || null }))
    .filter((d) => d.number !== '' && !not_documents.test(d.type))
  const dates = aka('dateOfBirthList', 'dateOfBirthItem')
    .flatMap((d) => ofacDateOfBirth(child(d, 'dateOfBirth')))
  return {
    list_ref: child(element, 'uid'), kind, names, dates_of_birth: dates, documents,
    programs: aka('programList', 'program').map((p) => p.text.trim()).filter((p) => p !== ''),
  }
}

const months: Record<string, string> = { jan: '01', feb: '02', mar: '03', apr: '04',
  may: '05', jun: '06', jul: '07', aug: '08', sep: '09', oct: '10', nov: '11', dec: '12' }

/** "10 Feb 1951", "Feb 1951", "1951", "circa 1951", "1956 to 1958". */
export function ofacDateOfBirth(text: string): DateOfBirth[] {
  const day = /^(\d{1,2}) ([A-Za-z]{3})[a-z]* (\d{4})$/.exec(text)
  const month = day ? months[day[2]!.toLowerCase()] : undefined
  if (day && month) {
    return [{ date: `${day[3]}-${month}-${day[1]!.padStart(2, '0')}`,
      year_from: Number(day[3]), year_to: Number(day[3]) }]
  }
  const range = /^(\d{4}) to (\d{4})$/.exec(text)
  if (range && Number(range[2]) >= Number(range[1])) {
    return [{ date: null, year_from: Number(range[1]), year_to: Number(range[2]) }]
  }
  const year = /(?:^|\D)(\d{4})$/.exec(text)
  return year ? [{ date: null, year_from: Number(year[1]), year_to: Number(year[1]) }] : []
}
