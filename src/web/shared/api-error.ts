/** A refused or failed call, with the service's own words (`detail`) and stable `code`. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly fieldErrors: { path: string; message: string }[]

  constructor(status: number, code: string, detail: string, fieldErrors: { path: string; message: string }[] = []) {
    super(detail)
    this.name = 'ApiError'
    this.status = status
    this.code = code
    this.fieldErrors = fieldErrors
  }
}

/**
 * Words for a refusal: the service's detail, with request paths like /body/quantity named as fields
 * (`fieldNames` gives a field its words, e.g. quantity: 'The quantity').
 */
export function errorText(error: unknown, fieldNames: Record<string, string> = {}): string {
  if (error instanceof ApiError) {
    if (error.code === 'validation_failed' && error.fieldErrors.length > 0) {
      return error.fieldErrors
        .map((issue) => {
          const last = issue.path.split('/').filter(Boolean).pop() ?? ''
          const name = fieldNames[last] ?? (last === 'body' || last === '' ? 'The request' : last.replaceAll('_', ' '))
          return `${capitalize(name)} ${issue.message}.`
        })
        .join(' ')
    }
    return capitalize(error.message.endsWith('.') ? error.message : `${error.message}.`)
  }
  return 'Something went wrong. Please try again.'
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
