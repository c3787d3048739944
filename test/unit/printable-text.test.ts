import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { printableText, printableTextWithin } from '../../src/lib/printable-text.ts'

const bytes = (...values: number[]) => Buffer.from(values)

describe('printableText', () => {
  test('plain ASCII, tab, newline and carriage return are kept as they are', () => {
    const text = 'HTTP said {"ok":true}\tfine\r\nnext line ~!@#$%^&*()'
    assert.equal(printableText(Buffer.from(text)), text)
    assert.equal(printableText(Buffer.alloc(0)), '')
  })

  test('well-formed multi-byte UTF-8 is kept, emoji and byte order mark included', () => {
    const text = '\ufeffgrüße, 日本, 😀, \u{10ffff}, \ufffd'
    assert.equal(printableText(Buffer.from(text)), text)
  })

  test('NUL and the other C0 controls become \\u00XX escapes; DEL and backslashes stay', () => {
    assert.equal(printableText(bytes(0x61, 0x00, 0x62)), 'a\\u0000b')
    assert.equal(printableText(bytes(0x00, 0x00)), '\\u0000\\u0000')
    assert.equal(printableText(bytes(0x01, 0x08, 0x0b, 0x0c, 0x0e, 0x1b, 0x1f)), '\\u0001\\u0008\\u000b\\u000c\\u000e\\u001b\\u001f')
    assert.equal(printableText(Buffer.from('a\\u0000b\x7f')), 'a\\u0000b\x7f')
  })

  test('each byte that is not well-formed UTF-8 becomes \\xNN, the text around it is kept', () => {
    assert.equal(printableText(bytes(0x6f, 0x6b, 0xff, 0xfe, 0x21)), 'ok\\xff\\xfe!')
    assert.equal(printableText(bytes(0x80)), '\\x80', 'a lone continuation byte')
    assert.equal(printableText(bytes(0xc0, 0xaf)), '\\xc0\\xaf', 'an overlong "/"')
    assert.equal(printableText(bytes(0xed, 0xa0, 0x80)), '\\xed\\xa0\\x80', 'a UTF-16 surrogate')
    assert.equal(printableText(bytes(0xf4, 0x90, 0x80, 0x80)), '\\xf4\\x90\\x80\\x80', 'above U+10FFFF')
    assert.equal(printableText(bytes(0xc3, 0x41)), '\\xc3A', 'a lead byte without its tail')
  })

  test('a 4-byte emoji cut part way through (as at the 1 KiB limit): its bytes are escaped at the end', () => {
    const emoji = Buffer.from('😀') // f0 9f 98 80
    assert.equal(emoji.length, 4)
    assert.equal(printableText(Buffer.concat([Buffer.from('ok '), emoji.subarray(0, 3)])), 'ok \\xf0\\x9f\\x98')
    assert.equal(printableText(Buffer.concat([Buffer.from('ok '), emoji.subarray(0, 1)])), 'ok \\xf0')
    assert.equal(printableText(Buffer.concat([Buffer.from('ok '), emoji])), 'ok 😀')
  })

  test('gzip bytes come out as printable text without NUL', () => {
    const gzipped = gzipSync(Buffer.from('{"received":true}'.repeat(20)))
    assert.ok(gzipped.includes(0), 'the gzip header holds NUL bytes')
    const text = printableText(gzipped)
    assert.ok(text.startsWith('\\u001f\\x8b\\u0008\\u0000'), text.slice(0, 40))
    assert.ok(!text.includes('\u0000'))
    assert.ok(!/[\x00-\x08\x0b\x0c\x0e-\x1f]/.test(text))
  })

  test('any bytes: no NUL or other escaped control in the answer, and never a lone surrogate', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1_100 }), (input) => {
        const text = printableText(input)
        return !text.includes('\u0000') && !/[\x00-\x08\x0b\x0c\x0e-\x1f]/.test(text) && text.isWellFormed()
      }),
      { numRuns: 500 },
    )
  })

  test('any text without C0 controls comes back unchanged', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        const clean = text.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f]/g, '')
        return printableText(Buffer.from(clean)) === clean
      }),
    )
  })
})

describe('printableTextWithin: the first KiB of a webhook answer stays within a KiB once escaped', () => {
  const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8')

  test('text that fits is printableText itself', () => {
    assert.equal(printableTextWithin(Buffer.from('a'.repeat(1024)), 1024), 'a'.repeat(1024))
    assert.equal(printableTextWithin(bytes(0x6f, 0x6b, 0x00), 1024), 'ok\\u0000')
  })

  test('escapes that would make it longer cut it short, never in the middle of an escape or a character', () => {
    // 1,024 NUL bytes escape to 6,144 bytes (printableText); within a KiB: 170 whole escapes.
    assert.equal(utf8Length(printableText(Buffer.alloc(1024))), 6144)
    assert.equal(printableTextWithin(Buffer.alloc(1024), 1024), '\\u0000'.repeat(170))
    // A 2-byte character cut at the limit leaves its lead byte, escaped as 4 bytes: it is left out.
    const cut = Buffer.from(`${'a'.repeat(1023)}é`).subarray(0, 1024)
    assert.equal(utf8Length(printableText(cut)), 1027)
    assert.equal(printableTextWithin(cut, 1024), 'a'.repeat(1023))
    assert.equal(printableTextWithin(Buffer.from(`${'a'.repeat(1022)}é`), 1024), `${'a'.repeat(1022)}é`)
    assert.equal(printableTextWithin(bytes(0x61, 0xff, 0x62), 5), 'a\\xff', 'the escape whole, then nothing that does not fit')
  })

  test('any bytes: at most the limit, and a prefix of what printableText makes of them', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1100 }), fc.integer({ min: 0, max: 1100 }), (input, limit) => {
        const whole = printableText(input)
        const kept = printableTextWithin(input, limit)
        assert.ok(utf8Length(kept) <= limit)
        assert.ok(whole.startsWith(kept))
        if (utf8Length(whole) <= limit) assert.equal(kept, whole)
      }),
      { numRuns: 300 },
    )
  })
})
