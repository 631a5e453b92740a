// Original file: svc/v1/auth.proto

export interface ExportKrlRequest {}

export interface ExportKrlRequest__Output {}
