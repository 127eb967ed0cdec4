import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { SaxesParser, type SaxesTagNS, type XMLDecl } from 'saxes'

// The defensive reading of every ISO 20022 message the bank receives (docs/operators/rails.md:
// "every message in is parsed defensively (no DTD, no external entities, bounded size) and either
// applied whole or refused whole with the reason shown to operators").
//
// The XML is read by saxes, a streaming SAX parser: it never reads a DTD nor expands an
// entity other than XML's five, and it reports a DOCTYPE, which is refused. On top of it this
// file bounds everything (bytes, depth, the prolog, one value, one record, the items) and
// keeps only one record at a time: the message's header (everything outside its repeated
// items) and the item being read, as a small tree of elements handed to the message's reader
// (pacs002-read.ts, …) when the item closes.
//
// Whole or nothing, in two passes over the same bytes. The first (openMessage) reads the whole
// message, checks every item, counts them and checks the totals the header declares, keeping
// nothing per item but a running tally; only when the message is whole does it resolve, with
// the header and the count. The second (items()) reads it again and hands the items out in
// chunks. The first pass also takes a SHA-256 of every block of the bytes, and the second
// checks each block against it before parsing it: an item handed out always comes from the
// bytes that were checked, and a source that changed in between is refused.

/** The namespace of a message of the versions the rules name (e.g. `pacs.002.001.11`). */
export const isoNamespace = (message: string): string => `urn:iso:std:iso:20022:tech:xsd:${message}`

/** The bounds of one message read. Each refuses the message when it is passed. */
export interface ReadLimits {
  /** Bytes of the message, counted as they are read: a stream is stopped when it passes. */
  message_bytes_max: number
  /** Elements open at once, the root `Document` being 1 (these messages go about 12 deep). */
  element_depth_max: number
  /** Characters before the root element: the XML declaration, comments and white space. */
  prolog_chars_max: number
  /** Characters of one element's text (the longest text these messages define is 500). */
  value_chars_max: number
  /** Elements of one record: one item (transaction, status, entry) or the header. */
  record_elements_max: number
  /** Items (transactions, statuses, entries) of one message. */
  message_items_max: number
}

export const read_limits: ReadLimits = {
  message_bytes_max: 256 * 1024 * 1024,
  element_depth_max: 32,
  prolog_chars_max: 64 * 1024,
  value_chars_max: 4096,
  record_elements_max: 10_000,
  message_items_max: 1_000_000,
}

/** The bytes hashed as one block on the first pass and checked as one on the second. */
const block_bytes = 1024 * 1024
/** The characters given to the parser at once on the second pass, between chunks handed out. */
const parse_slice_chars = 64 * 1024
/** The bytes read from a file at once. */
const file_read_bytes = 64 * 1024
/** The items of one chunk when the caller names no size. */
export const chunk_items_default = 1000

/**
 * Where a message comes from. A source is read twice (see the top of this file): `open` must
 * give the same bytes each time, or the second read is refused.
 */
export type MessageSource =
  | { file: string }
  | { content: string | Uint8Array }
  | { open: () => AsyncIterable<Uint8Array | string> }

/**
 * A message refused whole: what is wrong, in a sentence for the operators, and where (the
 * element's path, with an item's ordinal: `…/TxInfAndSts[3]/TxSts`; the line when known).
 */
export class MessageRefused extends Error {
  constructor(
    /** The message's name and version, e.g. `pacs.002.001.11`. */
    readonly message_name: string,
    readonly reason: string,
    /** The element the reason is about; empty when it is about the bytes. */
    readonly path: string,
    readonly line: number | null = null,
  ) {
    const where = [path === '' ? '' : `at ${path}`, line === null ? '' : `line ${line}`]
      .filter(Boolean).join(', ')
    super(`${message_name} refused: ${reason}${where === '' ? '' : ` (${where})`}`)
    this.name = 'MessageRefused'
  }
}

/** A refusal raised while reading, before it knows the message's name and line. */
export class Refusal extends Error {
  constructor(readonly reason: string, readonly path: string) {
    super(`${reason} at ${path}`)
    this.name = 'Refusal'
  }
}

/** One element of a record: its name, its `Ccy` attribute, its text or its child elements. */
export interface XmlNode {
  readonly name: string
  readonly parent: XmlNode | undefined
  /** The item's place in the message (1, 2, …) for an item's own element, else 0. */
  readonly ordinal: number
  currency: string | undefined
  text: string
  readonly children: XmlNode[]
  /** Whether an element was opened inside it (its text is then white space only). */
  container: boolean
}

/** What a message's reader declares; xml-read.ts does the rest. */
export interface MessageSpec<Header, Item, Tally> {
  /** The message's name and version, e.g. `pacs.002.001.11`: its namespace is named by it. */
  message: string
  /** The element names from `Document` to one item: `['Document', 'PmtRtr', 'TxInf']`. */
  item_path: readonly string[]
  /** An item from its element; throws Refusal. */
  item(node: XmlNode): Item
  /** The running tally of the items the header's totals are checked against. */
  tally(): Tally
  add(tally: Tally, item: Item): void
  /** The header from `Document` (the items left out), the count and the tally; throws Refusal. */
  header(document: XmlNode, count: number, tally: Tally): Header
}

/** A message checked whole: its header, how many items, and their reading in chunks. */
export interface OpenedMessage<Header, Item> {
  header: Header
  count: number
  /**
   * The items in order, in chunks of at most `chunk_items`. Throws MessageRefused only when
   * the source gives other bytes than on the check (nothing from those bytes is handed out).
   */
  items(chunk_items?: number): AsyncIterable<Item[]>
  /** What the reading of items held at once: at most about a chunk and a slice's items. */
  readonly held: { items_max: number }
}

/**
 * Reads the whole message and checks it: resolves with its header and count once it is
 * whole, or rejects with MessageRefused. Nothing per item is kept.
 */
export async function openMessage<Header, Item, Tally>(
  spec: MessageSpec<Header, Item, Tally>,
  source: MessageSource,
  limits: ReadLimits = read_limits,
): Promise<OpenedMessage<Header, Item>> {
  const tally = spec.tally()
  let count = 0
  const scanner = new Scanner(spec, limits, (item) => {
    spec.add(tally, item)
    count += 1
  })
  const digests: string[] = []
  const decoder = utf8Decoder(spec.message)
  for await (const block of blocksOf(boundedBytes(spec.message, source, limits))) {
    digests.push(sha256(block))
    scanner.write(decoder.decode(block))
  }
  scanner.write(decoder.end())
  const document = scanner.end()
  const header = scanner.refusing(() => spec.header(document, count, tally))
  const held = { items_max: 0 }
  return {
    header,
    count,
    held,
    items: (chunk_items = chunk_items_default) =>
      itemsOf(spec, source, limits, { digests, count, chunk_items, held }),
  }
}

/** A message read whole into memory: for messages of a few items (an RTC's answer). */
export async function readMessage<Header, Item, Tally>(
  spec: MessageSpec<Header, Item, Tally>,
  source: MessageSource,
  limits: ReadLimits = read_limits,
): Promise<{ header: Header; items: Item[] }> {
  const opened = await openMessage(spec, source, limits)
  const items: Item[] = []
  for await (const chunk of opened.items()) items.push(...chunk)
  return { header: opened.header, items }
}

interface SecondPass {
  digests: readonly string[]
  count: number
  chunk_items: number
  held: { items_max: number }
}

async function* itemsOf<Header, Item, Tally>(
  spec: MessageSpec<Header, Item, Tally>,
  source: MessageSource,
  limits: ReadLimits,
  pass: SecondPass,
): AsyncGenerator<Item[]> {
  if (!Number.isSafeInteger(pass.chunk_items) || pass.chunk_items < 1) {
    throw new RangeError(`chunk_items must be a whole number from 1, not ${pass.chunk_items}`)
  }
  const pending: Item[] = []
  const scanner = new Scanner(spec, limits, (item) => {
    pending.push(item)
    pass.held.items_max = Math.max(pass.held.items_max, pending.length)
  })
  const decoder = utf8Decoder(spec.message)
  let index = 0
  let handed = 0
  for await (const block of blocksOf(boundedBytes(spec.message, source, limits))) {
    if (sha256(block) !== pass.digests[index]) throw changed(spec.message, index)
    index += 1
    const text = decoder.decode(block)
    for (let at = 0; at < text.length; at += parse_slice_chars) {
      scanner.write(text.slice(at, at + parse_slice_chars))
      while (pending.length >= pass.chunk_items) {
        handed += pass.chunk_items
        yield pending.splice(0, pass.chunk_items)
      }
    }
  }
  if (index !== pass.digests.length) throw changed(spec.message, index)
  scanner.write(decoder.end())
  scanner.end()
  if (handed + pending.length !== pass.count) throw changed(spec.message, index)
  if (pending.length > 0) yield pending.splice(0)
}

function changed(message: string, block: number): MessageRefused {
  return new MessageRefused(message, 'the message changed between its check and its reading '
    + `(block ${block + 1} of ${block_bytes} bytes differs)`, '')
}

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex')

/** The source's bytes, counted as they come: refused once they pass the bound. */
async function* boundedBytes(
  message: string,
  source: MessageSource,
  limits: ReadLimits,
): AsyncGenerator<Uint8Array> {
  const tooLarge = () => new MessageRefused(message,
    `the message is larger than ${limits.message_bytes_max} bytes`, '')
  if ('file' in source && (await stat(source.file)).size > limits.message_bytes_max) {
    throw tooLarge()
  }
  let bytes = 0
  for await (const chunk of rawBytes(source)) {
    bytes += chunk.length
    if (bytes > limits.message_bytes_max) throw tooLarge()
    yield chunk
  }
}

async function* rawBytes(source: MessageSource): AsyncGenerator<Uint8Array> {
  if ('file' in source) {
    yield* createReadStream(source.file, { highWaterMark: file_read_bytes }) as
      AsyncIterable<Buffer>
  } else if ('content' in source) {
    const bytes = typeof source.content === 'string'
      ? Buffer.from(source.content, 'utf8') : source.content
    for (let at = 0; at < bytes.length; at += file_read_bytes) {
      yield bytes.subarray(at, at + file_read_bytes)
    }
  } else {
    for await (const chunk of source.open()) {
      yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    }
  }
}

/** The bytes in blocks of block_bytes (the last one shorter), whatever the source's chunks. */
async function* blocksOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = []
  let length = 0
  for await (const chunk of chunks) {
    let rest = chunk
    while (length + rest.length >= block_bytes) {
      const take = block_bytes - length
      parts.push(rest.subarray(0, take))
      yield Buffer.concat(parts)
      parts = []
      length = 0
      rest = rest.subarray(take)
    }
    if (rest.length > 0) {
      parts.push(rest)
      length += rest.length
    }
  }
  if (length > 0) yield Buffer.concat(parts)
}

/** UTF-8, the only encoding ISO 20022 messages use: a byte sequence that is not is refused. */
function utf8Decoder(message: string): { decode(bytes: Uint8Array): string; end(): string } {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  const refused = () => new MessageRefused(message, 'the message is not UTF-8 text', '')
  return {
    decode(bytes) {
      try {
        return decoder.decode(bytes, { stream: true })
      } catch {
        throw refused()
      }
    },
    end() {
      try {
        return decoder.decode()
      } catch {
        throw refused()
      }
    },
  }
}

/** The element's path from `Document`, an item's ordinal in brackets, then `below` if given. */
export function pathOf(node: XmlNode | undefined, below = ''): string {
  const names: string[] = []
  for (let at = node; at !== undefined; at = at.parent) {
    names.push(at.ordinal > 0 ? `${at.name}[${at.ordinal}]` : at.name)
  }
  return [...names.reverse(), ...(below === '' ? [] : [below])].join('/')
}

const white_space = /^[ \t\r\n]*$/

// The parser's state for one pass: the open elements, the header's tree, the item being read.
class Scanner<Item> {
  private readonly parser = new SaxesParser({ xmlns: true, position: true })
  private readonly namespace: string
  private readonly open: XmlNode[] = []
  private document: XmlNode | undefined
  private headerElements = 0
  private itemElements = 0
  private items = 0
  private inItem = false
  private ended = false

  constructor(
    private readonly spec: MessageSpec<unknown, Item, unknown>,
    private readonly limits: ReadLimits,
    private readonly onItem: (item: Item) => void,
  ) {
    this.namespace = isoNamespace(spec.message)
    const parser = this.parser
    parser.on('doctype', () => this.refuse('a DOCTYPE is not allowed: no DTD or entity is read'))
    parser.on('processinginstruction', (pi) =>
      this.refuse(`the processing instruction <?${pi.target}?> is not allowed`))
    parser.on('xmldecl', (decl) => this.declaration(decl))
    parser.on('error', (error) => this.refuse(`not well-formed XML: ${saxesReason(error)}`))
    parser.on('opentagstart', (tag) => this.starting(tag.name))
    parser.on('opentag', (tag) => this.opened(tag))
    parser.on('text', (text) => this.text(text))
    parser.on('cdata', (text) => this.text(text))
    parser.on('closetag', () => this.closed())
  }

  /** Parses the next piece of text; throws MessageRefused. */
  write(text: string): void {
    if (text === '') return
    this.refusing(() => {
      this.parser.write(text)
      // No root yet: what saxes holds (a DOCTYPE, a comment) is refused before it grows.
      if (this.document === undefined) this.checkProlog(this.parser.position)
    })
  }

  /** The end of the bytes: the tree of the header. Throws MessageRefused. */
  end(): XmlNode {
    this.refusing(() => this.parser.close())
    this.ended = true
    if (this.document === undefined) {
      throw new MessageRefused(this.spec.message, 'the message has no root element', '')
    }
    return this.document
  }

  /** Runs `work`, turning a Refusal into the message's MessageRefused with the line. */
  refusing<T>(work: () => T): T {
    try {
      return work()
    } catch (error) {
      if (!(error instanceof Refusal)) throw error
      const line = this.ended ? null : this.parser.line
      throw new MessageRefused(this.spec.message, error.reason, error.path, line)
    }
  }

  /** Refuses at the open element, or at `below` it (an element being opened). */
  private refuse(reason: string, below = ''): never {
    throw new Refusal(reason, pathOf(this.open.at(-1), below))
  }

  private declaration(decl: XMLDecl): void {
    if (decl.version !== undefined && decl.version !== '1.0') {
      this.refuse(`XML version ${decl.version} is not read; messages are XML 1.0`)
    }
    if (decl.encoding !== undefined && decl.encoding.toLowerCase() !== 'utf-8') {
      this.refuse(`the encoding ${decl.encoding} is not read; messages are UTF-8`)
    }
  }

  /** The start of the root, its name read: where the prolog ends. */
  private starting(name: string): void {
    // saxes is past `<`, the name and the character after it. Only the root's start is
    // wanted: the handler goes once it is seen.
    this.checkProlog(this.parser.position - name.length - 2)
    this.parser.off('opentagstart')
  }

  private checkProlog(chars: number): void {
    if (chars > this.limits.prolog_chars_max) {
      this.refuse(`more than ${this.limits.prolog_chars_max} characters before the root element`)
    }
  }

  private opened(tag: SaxesTagNS): void {
    const parent = this.open.at(-1)
    if (this.open.length + 1 > this.limits.element_depth_max) {
      this.refuse(`elements nest deeper than ${this.limits.element_depth_max}`, tag.local)
    }
    this.checkName(tag)
    if (parent !== undefined) {
      if (!white_space.test(parent.text)) this.refuse('text beside elements')
      parent.text = ''
      parent.container = true
    }
    const item = this.isItem(tag.local)
    if (item) this.countItem(tag.local)
    this.countElement(tag.local)
    const node: XmlNode = {
      name: tag.local,
      parent,
      ordinal: item ? this.items : 0,
      currency: tag.attributes['Ccy']?.value,
      text: '',
      children: [],
      container: false,
    }
    if (parent === undefined) this.document = node
    else if (!item) parent.children.push(node)
    this.open.push(node)
  }

  private checkName(tag: SaxesTagNS): void {
    if (tag.uri !== this.namespace) {
      const uri = tag.uri === '' ? 'no namespace' : `the namespace ${tag.uri}`
      const which = this.open.length === 0 ? 'the message' : `the element ${tag.local}`
      this.refuse(`${which} is in ${uri}, not ${this.namespace}`, tag.local)
    }
    const expected = this.spec.item_path[this.open.length]
    if (this.open.length < 2 && tag.local !== expected) {
      this.refuse(`the element ${tag.local} is not ${expected}`, tag.local)
    }
  }

  private isItem(name: string): boolean {
    const path = this.spec.item_path
    if (this.open.length !== path.length - 1 || name !== path.at(-1)) return false
    return this.open.every((node, at) => node.name === path[at])
  }

  private countItem(name: string): void {
    this.items += 1
    if (this.items > this.limits.message_items_max) {
      this.refuse(`more than ${this.limits.message_items_max} items`, `${name}[${this.items}]`)
    }
    this.itemElements = 0
    this.inItem = true
  }

  private countElement(name: string): void {
    const elements = this.inItem ? ++this.itemElements : ++this.headerElements
    if (elements > this.limits.record_elements_max) {
      this.refuse(`more than ${this.limits.record_elements_max} elements in one `
        + (this.inItem ? 'item' : 'header'), name)
    }
  }

  private text(text: string): void {
    const node = this.open.at(-1)
    if (node === undefined) return
    if (node.container) {
      if (!white_space.test(text)) this.refuse('text beside elements')
      return
    }
    if (node.text.length + text.length > this.limits.value_chars_max) {
      this.refuse(`more than ${this.limits.value_chars_max} characters in one element`)
    }
    node.text += text
  }

  private closed(): void {
    const node = this.open.at(-1)
    if (node !== undefined && node.ordinal > 0) {
      this.onItem(this.spec.item(node))
      this.inItem = false
    }
    this.open.pop()
  }
}

/** saxes's message without the position it prefixes (`1:23: `): the line is given apart. */
function saxesReason(error: Error): string {
  return error.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '')
}
