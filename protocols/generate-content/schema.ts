import { z } from 'zod';
import { PublicUrlOrVendorUri } from '../../domain/url-policy';

/**
 * POST /v1beta/models/{model}:generateContent and :streamGenerateContent
 * request body (spec 1 section 4.3, Gemini API GenerateContentRequest).
 * Field names are camelCase; `normalizeGenerateContentKeys` maps the
 * snake_case spelling Google also accepts before this schema runs.
 */

const Struct = z.record(z.string(), z.unknown());

export const GeminiPart = z.looseObject({
  text: z.string().optional(),
  inlineData: z.looseObject({ mimeType: z.string(), data: z.string() }).optional(),
  fileData: z.looseObject({ mimeType: z.string().optional(), fileUri: PublicUrlOrVendorUri }).optional(),
  functionCall: z.looseObject({ name: z.string(), args: Struct.optional(), id: z.string().optional() }).optional(),
  functionResponse: z.looseObject({ name: z.string(), response: Struct, id: z.string().optional() }).optional(),
  thought: z.boolean().optional(),
  thoughtSignature: z.string().optional(),
});
export type GeminiPart = z.infer<typeof GeminiPart>;

export const GeminiContent = z.looseObject({
  role: z.enum(['user', 'model']).optional(),
  parts: z.array(GeminiPart),
});
export type GeminiContent = z.infer<typeof GeminiContent>;

export const GeminiFunctionDeclaration = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  parameters: Struct.optional(),
  parametersJsonSchema: z.unknown().optional(),
});
export type GeminiFunctionDeclaration = z.infer<typeof GeminiFunctionDeclaration>;

export const GeminiTool = z.looseObject({
  functionDeclarations: z.array(GeminiFunctionDeclaration).optional(),
  googleSearch: z.looseObject({}).optional(),
  codeExecution: z.looseObject({}).optional(),
});
export type GeminiTool = z.infer<typeof GeminiTool>;

export const GeminiToolConfig = z.looseObject({
  functionCallingConfig: z
    .looseObject({
      mode: z.enum(['MODE_UNSPECIFIED', 'AUTO', 'ANY', 'NONE', 'VALIDATED']).optional(),
      allowedFunctionNames: z.array(z.string()).optional(),
    })
    .optional(),
});
export type GeminiToolConfig = z.infer<typeof GeminiToolConfig>;

export const GeminiGenerationConfig = z.looseObject({
  maxOutputTokens: z.int().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  topK: z.int().min(1).optional(),
  candidateCount: z.int().min(1).optional(),
  stopSequences: z.array(z.string()).optional(),
  presencePenalty: z.number().optional(),
  frequencyPenalty: z.number().optional(),
  seed: z.int().optional(),
  responseMimeType: z.string().optional(),
  responseSchema: Struct.optional(),
  responseJsonSchema: z.unknown().optional(),
});
export type GeminiGenerationConfig = z.infer<typeof GeminiGenerationConfig>;

export const GenerateContentRequest = z.looseObject({
  contents: z.array(GeminiContent).min(1),
  systemInstruction: GeminiContent.optional(),
  generationConfig: GeminiGenerationConfig.optional(),
  tools: z.array(GeminiTool).optional(),
  toolConfig: GeminiToolConfig.optional(),
  safetySettings: z.array(z.looseObject({})).optional(),
  cachedContent: z.string().optional(),
});
export type GenerateContentRequest = z.infer<typeof GenerateContentRequest>;
