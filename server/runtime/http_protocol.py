"""uvicorn's httptools protocol with a bound on each request's head (request line and headers).

uvicorn bounds the head only with h11 (h11_max_incomplete_event_size); with httptools, the parser
keeps every byte of an unfinished header, so a few connections could grow the server's memory
without limit, before any authentication runs. Past MAX_HEAD_BYTES the request gets a JSON 431
and the connection is closed.
"""

from __future__ import annotations

import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEAD_BYTES = 64 * 1024
_REFUSAL = json.dumps({"error": "request_header_fields_too_large", "code": "request_header_fields_too_large",
                       "message": f"the request line and headers are larger than {MAX_HEAD_BYTES} bytes",
                       "request_id": "-"}).encode()


class BoundedHeadHttpTools(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reading_head = True
        self._head_bytes = 0
        self._ended_a_message = False

    def data_received(self, data: bytes) -> None:
        self._ended_a_message = False
        super().data_received(data)
        # Counted after parsing: a chunk that completes a head (and carries a body), or ends a
        # request, is not all head bytes.
        if self._reading_head and not self._ended_a_message and not self.transport.is_closing():
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                     b"content-type: application/json\r\nconnection: close\r\n"
                                     b"content-length: " + str(len(_REFUSAL)).encode() + b"\r\n\r\n" + _REFUSAL)
                self.transport.close()

    def on_headers_complete(self) -> None:
        self._reading_head = False
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._reading_head, self._head_bytes = True, 0  # what comes next is the next request's head
        self._ended_a_message = True
