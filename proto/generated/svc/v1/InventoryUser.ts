// Original file: svc/v1/auth.proto

export interface InventoryUser {
  name?: string;
  spec_json?: string;
}

export interface InventoryUser__Output {
  name: string;
  spec_json: string;
}
