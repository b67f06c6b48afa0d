import { readFileSync } from 'node:fs';
import type { Db } from '../infra/mongo';
import {
  Catalogue, CatalogueFileSchema, ModelSchema, PricingRulesSchema, substituteUrls, type CatalogueFile,
} from '../domain/catalogue';

export function readCatalogueFile(path: string): CatalogueFile {
  return CatalogueFileSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
}

/** Seed (upsert) the registry into Mongo from the data file. Idempotent. */
export async function seedCatalogue(db: Db, file: CatalogueFile): Promise<number> {
  const now = new Date();
  await db.CatalogueRules.replaceOne({ _id: 'pricing_rules' }, { doc: file.pricing_rules, updated_at: now }, { upsert: true });
  for (const m of file.models) {
    await db.CatalogueModel.replaceOne({ _id: m.id }, { doc: m, updated_at: now }, { upsert: true });
  }
  return file.models.length;
}

/** Load the registry from Mongo, with channel URLs resolved against the environment. */
export async function loadCatalogue(db: Db, vars: Record<string, string>): Promise<Catalogue> {
  const [rules, models] = await Promise.all([
    db.CatalogueRules.findById('pricing_rules').lean(),
    db.CatalogueModel.find({}).lean(),
  ]);
  if (!rules) throw new Error('catalogue not seeded: run `npm run seed`');
  const file = substituteUrls(
    {
      pricing_rules: PricingRulesSchema.parse(rules.doc),
      models: models.map((m) => ModelSchema.parse(m.doc)).sort((a, b) => a.id.localeCompare(b.id)),
    },
    vars,
  );
  return new Catalogue(file.models, file.pricing_rules);
}
