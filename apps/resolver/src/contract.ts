export { resolver as contract } from "@aicr/contracts"
