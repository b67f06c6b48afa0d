/**
 * CSV formula injection (OWASP "CSV Injection"): a spreadsheet runs a cell
 * whose text begins with `=`, `+`, `-`, `@`, a tab or a carriage return. A
 * text cell that begins so gets a leading single quote, which the spreadsheet
 * shows as text and does not run; numbers are not text cells and stay as they
 * are (a cost of `-0.001` is a number, not a formula).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/** `text` as a spreadsheet reads it as text: a leading `'` when it would start a formula. */
export function neutraliseFormula(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}
