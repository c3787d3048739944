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
