// Original file: svc/v1/auth.proto

export interface TunnelLocation {
  proxy_id?: string;
  peer_addr?: string;
}

export interface TunnelLocation__Output {
  proxy_id: string;
  peer_addr: string;
}
