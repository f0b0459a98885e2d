import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";
import { type Abi, createPublicClient, createWalletClient, defineChain, type Hex, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { onTestFinished } from "vitest";
import { projectRoot } from "../../harness/process.js";

const require = createRequire(import.meta.url);
const artifacts = join(projectRoot, "node_modules", "@offchainlabs", "stablecoin-evm", "artifacts", "hardhat", "contracts");
const fiatToken = require(join(artifacts, "v2", "FiatTokenV2_2.sol", "FiatTokenV2_2.json")) as {
  abi: Abi;
  bytecode: Hex;
  linkReferences: Record<string, Record<string, Array<{ start: number; length: number }>>>;
};
const signatureChecker = require(join(artifacts, "util", "SignatureChecker.sol", "SignatureChecker.json")) as { abi: Abi; bytecode: Hex };

/** anvil's well-known development accounts (its default mnemonic). */
export const ANVIL_KEYS = {
  deployer: "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  relayer: "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  payee: "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
} as const satisfies Record<string, Hex>;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

// Foundry's anvil binary, from its npm package. The wrapper package (@foundry-rs/anvil) lists
// every platform's binary as optional, and only linux-amd64 is on the registry this project is
// built from, which breaks `npm ci`; so the binary package itself is the (optional) dependency.
const ANVIL = join(projectRoot, "node_modules", "@foundry-rs", "anvil-linux-amd64", "bin", "anvil");

/** A local chain: anvil, stopped when the test ends. */
export async function startAnvil(): Promise<{ rpcUrl: string; chainId: number; stop(): void }> {
  if (!existsSync(ANVIL)) throw new Error(`anvil is not installed at ${ANVIL} (the @foundry-rs/anvil-linux-amd64 package is linux x64 only)`);
  const port = await freePort();
  const anvil: ChildProcess = spawn(ANVIL, ["--port", String(port), "--host", "127.0.0.1", "--silent"], { stdio: "ignore" });
  const stop = () => void anvil.kill("SIGKILL");
  try {
    onTestFinished(stop);
  } catch {
    // started in a hook: the file stops it
  }
  const rpcUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
    }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { rpcUrl, chainId: 31337, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  stop();
  throw new Error("anvil did not start");
}

/** Circle's FiatToken v2.2 (USDC's contract), deployed from its published artifacts, with a minting helper. */
export async function deployFiatToken(rpcUrl: string, chainId: number) {
  const chain = defineChain({
    id: chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const deployer = privateKeyToAccount(ANVIL_KEYS.deployer);
  const wallet = createWalletClient({ account: deployer, chain, transport: http(rpcUrl) });
  const reader = createPublicClient({ chain, transport: http(rpcUrl) });
  const deploy = async (abi: Abi, bytecode: Hex) => {
    const hash = await wallet.deployContract({ abi, bytecode });
    return (await reader.waitForTransactionReceipt({ hash })).contractAddress!;
  };
  const library = await deploy(signatureChecker.abi, signatureChecker.bytecode);
  // Link the SignatureChecker library's address into the token's bytecode.
  let code = fiatToken.bytecode.slice(2);
  for (const refs of Object.values(fiatToken.linkReferences)) {
    for (const { start, length } of Object.values(refs).flat())
      code = code.slice(0, start * 2) + library.slice(2).toLowerCase() + code.slice((start + length) * 2);
  }
  const token = await deploy(fiatToken.abi, `0x${code}`);
  const write = async (functionName: string, args: unknown[]) => {
    const hash = await wallet.writeContract({ address: token, abi: fiatToken.abi, functionName, args });
    await reader.waitForTransactionReceipt({ hash });
  };
  await write("initialize", ["USD Coin", "USDC", "USD", 6, deployer.address, deployer.address, deployer.address, deployer.address]);
  await write("initializeV2", ["USDC"]);
  await write("initializeV2_1", [deployer.address]);
  await write("initializeV2_2", [[], "USDC"]);
  await write("configureMinter", [deployer.address, 10n ** 15n]);
  return {
    token,
    name: "USDC",
    version: "2",
    mint: (to: Hex, micros: bigint) => write("mint", [to, micros]),
    balanceOf: async (who: Hex) => (await reader.readContract({ address: token, abi: fiatToken.abi, functionName: "balanceOf", args: [who] })) as bigint,
  };
}
