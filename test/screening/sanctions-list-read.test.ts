import assert from 'node:assert/strict'
import fs from 'node:fs'
import { test } from 'node:test'
import type { ListEntry } from '../../src/screening/list-entry.ts'
import {
  ListRefused, ofacDateOfBirth, SanctionsListReader,
} from '../../src/screening/sanctions-list-read.ts'

// The two lists' XML formats read from the fixtures of test/fixtures/screening/ (made-up
// entries in the UN consolidated list's and OFAC's SDN list's published formats), in pieces
// as a file arrives, and what is refused.

const fixture = (name: string) =>
  fs.readFileSync(new URL(`../fixtures/screening/${name}`, import.meta.url), 'utf8')

function read(text: string, piece = 97) {
  const entries: ListEntry[] = []
  const reader = new SanctionsListReader((entry) => entries.push(entry))
  for (let i = 0; i < text.length; i += piece) reader.write(text.slice(i, i + piece))
  return { ...reader.end(), list: entries }
}

test('sanctions list read - the UN consolidated list: individuals and entities with aliases, original script, dates of birth, documents, and the list\'s dateGenerated', () => {
  const read_ = read(fixture('un-consolidated.xml'))
  assert.equal(read_.source, 'un_consolidated')
  assert.equal(read_.list_date, '2026-11-30T08:15:02.117Z')
  assert.equal(read_.entries, 5)
  const [zorin, qasimi, nunez, crescent, sominor] = read_.list
  assert.deepEqual(zorin, {
    list_ref: 'FXi.001', kind: 'individual',
    names: ['IVAN PETROVICH ZORIN', 'Иван Петрович Зорин', 'Ivan Zorine'],
    dates_of_birth: [{ date: '1961-04-12', year_from: 1961, year_to: 1961 }],
    documents: [{ type: 'Passport', number: 'P 7731 0042', country: 'Nowhere' }],
    programs: ['Fixture'],
  })
  assert.deepEqual(qasimi!.names, ['ABD AL-RAHMAN YUSUF AL-QASIMI', 'عبد الرحمن يوسف القاسمي',
    'Abdulrahman al-Qasimi', 'Abu Yusuf'])
  assert.deepEqual(qasimi!.dates_of_birth, [{ date: null, year_from: 1975, year_to: 1975 }])
  assert.deepEqual(nunez!.names, ['José María Núñez García'])
  assert.deepEqual(nunez!.dates_of_birth, [{ date: null, year_from: 1968, year_to: 1970 }])
  assert.equal(crescent!.kind, 'entity')
  assert.deepEqual(crescent!.names, ['GOLDEN CRESCENT TRADING COMPANY LTD',
    'Golden Crescent General Trading'])
  assert.deepEqual(sominor!.names, ['Société Minière du Nord', 'SOMINOR'])
})

test('sanctions list read - OFAC\'s SDN list: individuals, an entity and a vessel with akas, dates of birth in OFAC\'s forms, ID numbers, and the Publish_Date', () => {
  const read_ = read(fixture('ofac-sdn.xml'), 13)
  assert.equal(read_.source, 'ofac_sdn')
  assert.equal(read_.list_date, '2026-12-01')
  assert.equal(read_.entries, 5)
  const [volkovsky, dubois, northern, pearl, osei] = read_.list
  assert.deepEqual(volkovsky, {
    list_ref: '990001', kind: 'individual',
    names: ['Dmitri VOLKOVSKY', 'Dmitriy VOLKOVSKIY', 'Дмитрий Волковский'],
    dates_of_birth: [{ date: '1970-03-23', year_from: 1970, year_to: 1970 }],
    // The idList's Gender is not a document.
    documents: [{ type: 'Passport', number: '7201 558812', country: 'Nowhere' }],
    programs: ['FIXTURE'],
  })
  assert.deepEqual(dubois!.names, ['Hélène DUBOIS-MARCHAND', 'Helene MARCHAND'])
  assert.equal(northern!.kind, 'entity')
  assert.deepEqual(northern!.documents.map((d) => d.number), ['1027700132195'])
  assert.equal(pearl!.kind, 'vessel')
  assert.deepEqual(osei!.dates_of_birth, [{ date: null, year_from: 1963, year_to: 1966 },
    { date: null, year_from: 1960, year_to: 1960 }])
  assert.deepEqual(osei!.programs, ['FIXTURE', 'FIXTURE2'])
})

test('sanctions list read - OFAC dates of birth: a day, a month, a year, circa, a range; anything else is no date', () => {
  assert.deepEqual(ofacDateOfBirth('5 Feb 1951'),
    [{ date: '1951-02-05', year_from: 1951, year_to: 1951 }])
  assert.deepEqual(ofacDateOfBirth('Feb 1951'), [{ date: null, year_from: 1951, year_to: 1951 }])
  assert.deepEqual(ofacDateOfBirth('1951'), [{ date: null, year_from: 1951, year_to: 1951 }])
  assert.deepEqual(ofacDateOfBirth('circa 1951'),
    [{ date: null, year_from: 1951, year_to: 1951 }])
  assert.deepEqual(ofacDateOfBirth('1956 to 1958'),
    [{ date: null, year_from: 1956, year_to: 1958 }])
  assert.deepEqual(ofacDateOfBirth('unknown'), [])
})

test('sanctions list read - refused: another root element, a DOCTYPE, XML that is not well-formed, no root', () => {
  assert.throws(() => read('<Document><x/></Document>'), (e: unknown) =>
    e instanceof ListRefused && /neither the UN's CONSOLIDATED_LIST nor OFAC's sdnList/.test(e.message))
  assert.throws(() => read('<!DOCTYPE sdnList [<!ENTITY x "y">]><sdnList/>'), ListRefused)
  assert.throws(() => read('<sdnList><sdnEntry><uid>1</uid></sdnList>'), ListRefused)
  assert.throws(() => read('   '), ListRefused)
})
