/** This controller's room and watches: the contract in `packages/contracts` (design/style.md §B.4). */
export { validationGate as contract } from "@aicr/contracts"
