/**
 * Arbitrary bytes as text a PostgreSQL `text` column accepts: well-formed UTF-8 is kept as it is,
 * C0 control characters other than tab, newline and carriage return become `\u0000`-style escapes
 * (PostgreSQL refuses NUL outright), and each byte that is not part of well-formed UTF-8 becomes
 * `\xNN`. Backslashes already in the input are left alone, so the result is for reading, not for
 * turning back into the exact bytes.
 */
export function printableText(bytes: Uint8Array): string {
  let out = ''
  let runStart = 0
  let i = 0
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i)
    if (length > 0) {
      i += length
      continue
    }
    out += escapeControls(decoder.decode(bytes.subarray(runStart, i))) + `\\x${hex(bytes[i]!, 2)}`
    i += 1
    runStart = i
  }
  return out + escapeControls(decoder.decode(bytes.subarray(runStart)))
}

/**
 * `printableText` of as many of `bytes` as fit in `maxBytes` bytes of UTF-8 once escaped: a reply's
 * first KiB stays within a KiB stored even when escapes make it longer. A character or an escape is
 * never cut in two.
 */
export function printableTextWithin(bytes: Uint8Array, maxBytes: number): string {
  const whole = printableText(bytes)
  if (encoder.encode(whole).length <= maxBytes) return whole
  let out = ''
  let used = 0
  let i = 0
  while (i < bytes.length) {
    const length = sequenceLength(bytes, i)
    const byte = bytes[i]!
    const [piece, size] =
      length === 0 ? [`\\x${hex(byte, 2)}`, 4]
      : length === 1 && CONTROL_BYTE(byte) ? [`\\u${hex(byte, 4)}`, 6]
      : [decoder.decode(bytes.subarray(i, i + length)), length]
    if (used + size > maxBytes) break
    out += piece
    used += size
    i += Math.max(length, 1)
  }
  return out
}

const decoder = new TextDecoder('utf-8', { ignoreBOM: true })
const encoder = new TextEncoder()
const CONTROL_BYTE = (byte: number): boolean => byte <= 0x1f && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d

// Every C0 control but tab (09), newline (0a) and carriage return (0d).
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f]/g

function escapeControls(text: string): string {
  return text.replace(CONTROLS, (char) => `\\u${hex(char.charCodeAt(0), 4)}`)
}

function hex(value: number, digits: number): string {
  return value.toString(16).padStart(digits, '0')
}

const isTail = (byte: number | undefined, low = 0x80, high = 0xbf): boolean => byte !== undefined && byte >= low && byte <= high

/**
 * The length of the well-formed UTF-8 sequence starting at `i` (Unicode Table 3-7: no overlong forms,
 * no surrogates, nothing above U+10FFFF), or 0 when the byte there does not start one.
 */
function sequenceLength(bytes: Uint8Array, i: number): number {
  const lead = bytes[i]!
  if (lead <= 0x7f) return 1
  if (lead >= 0xc2 && lead <= 0xdf) return isTail(bytes[i + 1]) ? 2 : 0
  if (lead >= 0xe0 && lead <= 0xef) {
    const second = lead === 0xe0 ? isTail(bytes[i + 1], 0xa0) : lead === 0xed ? isTail(bytes[i + 1], 0x80, 0x9f) : isTail(bytes[i + 1])
    return second && isTail(bytes[i + 2]) ? 3 : 0
  }
  if (lead >= 0xf0 && lead <= 0xf4) {
    const second = lead === 0xf0 ? isTail(bytes[i + 1], 0x90) : lead === 0xf4 ? isTail(bytes[i + 1], 0x80, 0x8f) : isTail(bytes[i + 1])
    return second && isTail(bytes[i + 2]) && isTail(bytes[i + 3]) ? 4 : 0
  }
  return 0
}

/**
 * A string from outside (another system's error text) as a PostgreSQL `text` or `jsonb` value
 * accepts it: lone surrogates become U+FFFD and C0 controls other than tab, newline and carriage
 * return become `\u0000`-style escapes (PostgreSQL refuses NUL in both).
 */
export function storableText(text: string): string {
  return escapeControls(text.toWellFormed())
}

/** `storableText`, trimmed and cut to at most `max` code points: a name from outside kept in a bounded field. */
export function storableName(text: string, max: number): string {
  return [...storableText(text).trim()].slice(0, max).join('').trim()
}
