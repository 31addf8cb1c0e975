"""`python -m ocm.mcp_server`: serve on stdio."""

from ocm.mcp_server.server import main

if __name__ == "__main__":
    main()
