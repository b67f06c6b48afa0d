/** The `stopword` package (v3) ships no types; only the lists used here are declared. */
declare module 'stopword' {
  export const eng: string[];
  export const zho: string[];
  export const jpn: string[];
}
