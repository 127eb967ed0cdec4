import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { validateXML } from 'xmllint-wasm'

// XSD validation for the ISO 20022 tests: libxml2's xmllint in WebAssembly (xmllint-wasm, a
// development dependency), so no native build or system package is needed. Every message the
// bank writes must be valid against the official XSD (RULINGS, "Rails: ISO 20022"); the
// schemas are test/fixtures/iso20022/xsd/ (where they come from: its README.md). None of them
// imports or includes another, so each validates alone.

/** The folder of the official schemas, named by their message: `pacs.008.001.09.xsd`. */
export const iso20022_xsd_dir = fileURLToPath(new URL('../fixtures/iso20022/xsd/', import.meta.url))

/**
 * The most WebAssembly memory xmllint may take, in 64 KiB pages (256 MiB): a message of a few
 * thousand transactions fits; the default (32 MiB) is too small for the larger tests.
 */
const memory_pages_max = 4096

const schemas = new Map<string, Promise<string>>()

/**
 * Validates a message against an XSD and returns xmllint's errors, each a line naming the
 * message's line and the rule broken (`document.xml:12: element Nm: Schemas validity error :
 * …`); an empty list when the message is valid. `xsdFile` is a schema's file name in
 * test/fixtures/iso20022/xsd/ (`'pacs.008.001.09.xsd'`) or a path. A message that is not
 * well-formed XML is reported as errors too; a schema that cannot be read rejects.
 */
export async function validateAgainstXsd(
  xml: string | Uint8Array,
  xsdFile: string,
): Promise<string[]> {
  const schemaPath = path.isAbsolute(xsdFile) || xsdFile.includes('/')
    ? path.resolve(xsdFile) : path.join(iso20022_xsd_dir, xsdFile)
  const result = await validateXML({
    xml: { fileName: 'document.xml', contents: xml },
    schema: { fileName: path.basename(schemaPath), contents: await schemaText(schemaPath) },
    initialMemoryPages: 256,
    maxMemoryPages: memory_pages_max,
  })
  return result.valid ? [] : result.errors.map((error) => error.rawMessage)
}

/** A schema's text, read once per process. */
function schemaText(schemaPath: string): Promise<string> {
  let text = schemas.get(schemaPath)
  if (text === undefined) {
    text = readFile(schemaPath, 'utf8')
    schemas.set(schemaPath, text)
  }
  return text
}
