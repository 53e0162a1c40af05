/**
 * The ASCII count of estimateTokens (src/compression/ascii-tokens.ts) against the Unicode-aware
 * pattern it stands in for: the same number for every ASCII text, from the corpus of real tool
 * schemas and results (as JSON and as TOON) and from random text built of the pieces the pattern
 * tells apart (long runs, camelCase, digits, whitespace before punctuation).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { encode as encodeToon } from "@toon-format/toon";
import { describe, expect, it } from "vitest";
import { asciiTokens, isAscii } from "../../src/compression/ascii-tokens.js";
import { estimateTokens, tokensByPattern } from "../../src/compression/result.js";

const CORPUS = path.resolve(import.meta.dirname, "../fixtures/corpus");

function corpusTexts(): string[] {
  const texts: string[] = [];
  for (const server of readdirSync(CORPUS)) {
    for (const file of readdirSync(path.join(CORPUS, server))) {
      const text = readFileSync(path.join(CORPUS, server, file), "utf8");
      texts.push(text);
      try {
        const value = JSON.parse(text) as unknown;
        texts.push(JSON.stringify(value), encodeToon(value));
      } catch {
        // Not JSON: the text alone.
      }
    }
  }
  return texts;
}

/** A seeded generator (mulberry32): the same texts on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  " ",
  "  ",
  "\t",
  "\n",
  "\r\n",
  "\v\f",
  "a",
  "Z",
  "word",
  " word",
  "camelCaseName",
  "getElementById",
  "aBcDeF",
  "ABC",
  "0",
  "12345",
  "7",
  '":"',
  '"},{"',
  "{",
  "[]",
  ",",
  "+",
  "/",
  "=",
  "_",
  "-",
  "~!@#$%^&*()",
  "snake_case_identifier_name_long",
  "kebab-case-identifier-name-long",
  "aGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQ=",
  "0123456789abcdef0123456789abcdef",
  "0123456789012345678901234567",
  "550e8400-e29b-41d4-a716-446655440000",
  "\x00",
  "\x7f",
];

function randomText(next: () => number): string {
  let text = "";
  const n = 1 + Math.floor(next() * 40);
  for (let i = 0; i < n; i++) text += PIECES[Math.floor(next() * PIECES.length)]!;
  return text;
}

/** Every ASCII character, alone and in pairs. */
function asciiPairs(): string[] {
  const chars = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
  return chars.flatMap((a) => [a, ...chars.map((b) => a + b)]);
}

describe("estimateTokens on ASCII text", () => {
  it("counts the corpus exactly as the pattern does", () => {
    const texts = corpusTexts().filter(isAscii);
    expect(texts.length).toBeGreaterThan(100);
    for (const text of texts)
      expect(asciiTokens(text), text.slice(0, 80)).toBe(tokensByPattern(text));
  });

  it("counts random texts of the pattern's pieces, and every pair of characters, exactly as it does", () => {
    const next = random(30);
    const texts = [...Array.from({ length: 20_000 }, () => randomText(next)), ...asciiPairs()];
    const differ = texts.filter((t) => asciiTokens(t) !== tokensByPattern(t));
    expect(differ.map((t) => JSON.stringify(t)).slice(0, 5)).toEqual([]);
  });

  it("leaves other text to the pattern", () => {
    expect(isAscii('{"name":"x"}')).toBe(true);
    for (const text of ["Привет мир", "日本語のテキスト", "emoji 🚀 here", "café"]) {
      expect(isAscii(text)).toBe(false);
      expect(estimateTokens(text)).toBe(tokensByPattern(text));
    }
    // The estimate of mixed text is the pattern's (a letter run of Cyrillic: 1 per 3 letters).
    expect(estimateTokens("абвгде")).toBe(2);
  });
});
