// The seeded sanctions list of the benchmarks (bench/screening.ts, and bench/run.ts with
// BENCH_SCREENING_LIST): entries made up of syllables (three individuals in four, the rest
// entities; one to three aliases each, some in Cyrillic, some with diacritics; dates of birth
// and passport numbers), written as OFAC's SDN XML. The same seed makes the same list.
import type { ListEntry } from '../src/screening/list-entry.ts'

/** A seeded generator (mulberry32), so that every run screens the same names. */
function seeded(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const random = seeded(46)
export const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!
const onsets = ['b', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'z', 'sh',
  'kh', 'ch', 'br', 'dr', 'tr', 'al', 'ab', 'ur', 'yu']
const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ia', 'é', 'ü']
const codas = ['', '', 'n', 'r', 'm', 's', 'd', 'v', 'k', 'l']
const cyrillic: Record<string, string> = { a: 'а', b: 'б', d: 'д', e: 'е', f: 'ф', g: 'г',
  h: 'х', i: 'и', k: 'к', l: 'л', m: 'м', n: 'н', o: 'о', p: 'п', r: 'р', s: 'с', t: 'т',
  u: 'у', v: 'в', z: 'з', y: 'й', c: 'ц' }
const forms = ['LLC', 'LTD', 'JSC', 'Trading Company', 'Holdings', 'Shipping', 'Group']

export function word(): string {
  const syllables = 2 + Math.floor(random() * 2)
  let text = ''
  for (let i = 0; i < syllables; i++) text += pick(onsets) + pick(vowels) + pick(codas)
  return text[0]!.toUpperCase() + text.slice(1)
}

function toCyrillic(name: string): string {
  return [...name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase()]
    .map((c) => cyrillic[c] ?? c).join('')
}

export function entry(i: number): ListEntry {
  const individual = random() < 0.75
  const names = individual ? [word(), word(), ...(random() < 0.5 ? [word()] : [])]
    : [word(), word(), pick(forms)]
  const primary = names.join(' ')
  const aliases = [names.slice().reverse().join(' ')]
  if (random() < 0.5) aliases.push(toCyrillic(primary))
  if (random() < 0.3) aliases.push(`${word()} ${names.at(-1)}`)
  const year = 1940 + Math.floor(random() * 60)
  return {
    list_ref: String(100_000 + i), kind: individual ? 'individual' : 'entity',
    names: [primary, ...aliases],
    dates_of_birth: individual ? [{ date: `${year}-03-14`, year_from: year, year_to: year }] : [],
    documents: individual && random() < 0.5
      ? [{ type: 'Passport', number: `P${Math.floor(random() * 1e8)}`, country: null }] : [],
    programs: ['BENCH'],
  }
}

const xmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;')

/** The entries as OFAC's SDN XML (each name as its lastName, as OFAC writes entities). */
export function sdnXml(entries: ListEntry[]): string {
  const parts = ['<?xml version="1.0" standalone="yes"?>\n<sdnList ' +
    'xmlns="http://tempuri.org/sdnList.xsd"><publshInformation><Publish_Date>12/01/2026' +
    `</Publish_Date><Record_Count>${entries.length}</Record_Count></publshInformation>`]
  for (const e of entries) {
    const akas = e.names.slice(1).map((n, i) => `<aka><uid>${i}</uid><type>a.k.a.</type>` +
      `<category>strong</category><lastName>${xmlText(n)}</lastName></aka>`).join('')
    const ids = e.documents.map((d) => `<id><uid>1</uid><idType>${d.type}</idType>` +
      `<idNumber>${d.number}</idNumber></id>`).join('')
    const dobs = e.dates_of_birth.map((d) => `<dateOfBirthItem><uid>1</uid><dateOfBirth>14 Mar ` +
      `${d.year_from}</dateOfBirth><mainEntry>true</mainEntry></dateOfBirthItem>`).join('')
    parts.push(`<sdnEntry><uid>${e.list_ref}</uid><lastName>${xmlText(e.names[0]!)}</lastName>` +
      `<sdnType>${e.kind === 'individual' ? 'Individual' : 'Entity'}</sdnType>` +
      `<programList><program>BENCH</program></programList><idList>${ids}</idList>` +
      `<akaList>${akas}</akaList><dateOfBirthList>${dobs}</dateOfBirthList></sdnEntry>`)
  }
  parts.push('</sdnList>\n')
  return parts.join('\n')
}

/** `count` entries of the list and its SDN XML file. */
export function benchList(count: number): { entries: ListEntry[]; file: Buffer } {
  const entries = Array.from({ length: count }, (_, i) => entry(i))
  return { entries, file: Buffer.from(sdnXml(entries)) }
}
