// Original file: svc/v1/auth.proto

export interface TraitValues {
  values?: string[];
}

export interface TraitValues__Output {
  values: string[];
}
